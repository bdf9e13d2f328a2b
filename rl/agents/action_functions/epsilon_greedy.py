"""Epsilon-greedy exploration, batched and driven by the agent's own tf.random.Generator."""

from __future__ import annotations

import tensorflow as tf

from rl.agents.action_functions.greedy import greedy
from rl.registry import register_action_function


@register_action_function("epsilon_greedy", role="q_exploration")
def epsilon_greedy(
    q_values: tf.Tensor,
    generator: tf.random.Generator,
    epsilon: tf.Tensor | float,
    legal: tf.Tensor | None = None,
) -> tf.Tensor:
    """With probability `epsilon` per row a uniformly random action, else the greedy one; `epsilon`
    may be per row (Ape-X gives each actor its own). With `legal` [B, A] (an action mask) the
    random action is uniform over the legal ones; `q_values` are masked already."""
    batch = tf.shape(q_values)[0]
    num_actions = tf.shape(q_values)[-1]
    # One draw of two uniforms per row (explore?, which action) keeps the op count per acting
    # step low: this runs once per env step inside the compiled collect loop.
    uniform = generator.uniform([batch, 2])
    explore = uniform[:, 0] < tf.cast(epsilon, tf.float32)
    if legal is None:
        random_actions = tf.cast(
            tf.minimum(
                tf.floor(uniform[:, 1] * tf.cast(num_actions, tf.float32)),
                tf.cast(num_actions - 1, tf.float32),
            ),
            tf.int64,
        )
    else:  # the k-th legal action, k uniform below the number of legal ones (same one draw)
        legal_float = tf.cast(legal, tf.float32)
        count = tf.reduce_sum(legal_float, axis=-1)
        k = tf.minimum(tf.floor(uniform[:, 1] * count), count - 1.0)
        rank = tf.cumsum(legal_float, axis=-1) - 1.0  # each legal action's place among them
        chosen = tf.logical_and(legal, tf.equal(rank, k[:, None]))
        random_actions = tf.argmax(tf.cast(chosen, tf.int32), axis=-1, output_type=tf.int64)
    return tf.where(explore, random_actions, greedy(q_values))
