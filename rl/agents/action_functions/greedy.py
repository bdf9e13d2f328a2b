"""Greedy action selection: argmax over Q-values (evaluation, test mode)."""

from __future__ import annotations

import tensorflow as tf

from rl.registry import register_action_function


@register_action_function("greedy", role="q_evaluation")
def greedy(q_values: tf.Tensor, generator: tf.random.Generator | None = None) -> tf.Tensor:
    """Returns argmax_a Q(s, a) for each row of `q_values` [batch, num_actions] as int64."""
    del generator  # deterministic; the argument keeps every action function's signature alike
    return tf.argmax(q_values, axis=-1, output_type=tf.int64)
