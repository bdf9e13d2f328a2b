"""A stand-in for `tf.random.Generator` whose draws depend only on a seed tensor: an exported
policy's `sample_action(observation, seed)` must give the same actions for the same seed in any
process, without a variable to carry. Each draw is keyed by the seed folded with its index.
"""

from __future__ import annotations

import tensorflow as tf


class StatelessGenerator:
    """`normal` / `uniform` like `tf.random.Generator`, from `seed` (int64 scalar) alone."""

    def __init__(self, seed: tf.Tensor) -> None:
        self._key = tf.stack([tf.cast(seed, tf.int64), tf.constant(0x5EED, tf.int64)])
        self._draws = 0  # Python: each draw in the traced function gets its own key

    def _next_key(self) -> tf.Tensor:
        self._draws += 1
        return tf.random.experimental.stateless_fold_in(self._key, self._draws)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=tf.float32) -> tf.Tensor:
        return tf.random.stateless_normal(shape, self._next_key(), mean, stddev, dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=tf.float32) -> tf.Tensor:
        return tf.random.stateless_uniform(shape, self._next_key(), minval, maxval, dtype)
