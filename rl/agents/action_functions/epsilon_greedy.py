"""Epsilon-greedy exploration, batched and driven by the agent's own tf.random.Generator."""

from __future__ import annotations

import tensorflow as tf

from rl.agents.action_functions.greedy import greedy
from rl.registry import register_action_function


@register_action_function("epsilon_greedy")
def epsilon_greedy(
    q_values: tf.Tensor, generator: tf.random.Generator, epsilon: tf.Tensor | float
) -> tf.Tensor:
    """With probability `epsilon` per row a uniformly random action, else the greedy one.

    `epsilon` may be a scalar or a per-row vector (Ape-X gives each actor its own epsilon).
    """
    batch = tf.shape(q_values)[0]
    num_actions = tf.cast(tf.shape(q_values)[-1], tf.int64)
    random_actions = generator.uniform([batch], 0, num_actions, dtype=tf.int64)
    explore = generator.uniform([batch]) < tf.cast(epsilon, tf.float32)
    return tf.where(explore, random_actions, greedy(q_values))
