"""A uniform replay memory held in tf.Variables: written and sampled inside the compiled program.

Why: the Python-path replay is numpy, so every update would need the host. Here `add` is a
scatter and `sample` a gather with indices from the agent's generator, so a whole DQN iteration
is one XLA program, and the replay is checkpointed with the agent: a restored run samples
exactly what an uninterrupted one would. Semantics are `rl.memory`'s uniform replay with
one-step transitions.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf


class TFReplay(tf.Module):
    """A ring buffer of `capacity` transitions with the given per-row field shapes/dtypes."""

    def __init__(self, capacity: int, fields: dict[str, tuple[Sequence[int], tf.DType]]) -> None:
        super().__init__(name="replay")
        self.capacity = int(capacity)
        self.fields = {
            name: tf.Variable(tf.zeros([self.capacity, *shape], dtype), trainable=False, name=name)
            for name, (shape, dtype) in fields.items()
        }
        # Transitions ever added; the next row written is `added % capacity`.
        self.added = tf.Variable(0, dtype=tf.int64, trainable=False, name="added")

    def size(self) -> tf.Tensor:
        """Rows currently stored (int64)."""
        return tf.minimum(self.added, self.capacity)

    def add(self, rows: dict[str, tf.Tensor]) -> None:
        """Appends M rows (M <= capacity), overwriting the oldest ones when full."""
        count = tf.shape(rows["reward"], out_type=tf.int64)[0]
        positions = (self.added + tf.range(count, dtype=tf.int64)) % self.capacity
        for name, variable in self.fields.items():
            variable.scatter_nd_update(positions[:, None], rows[name])
        self.added.assign_add(count)

    def sample(
        self, generator: tf.random.Generator, num_batches: int, batch_size: int
    ) -> dict[str, tf.Tensor]:
        """[num_batches, batch_size, ...] rows drawn uniformly (with replacement)."""
        size = self.size()
        uniform = generator.uniform([num_batches, batch_size], dtype=tf.float64)
        indices = tf.minimum(tf.cast(uniform * tf.cast(size, tf.float64), tf.int64), size - 1)
        return {name: tf.gather(variable, indices) for name, variable in self.fields.items()}
