"""Shuffling flattened samples and cutting them into minibatches, with the agent's generator.

Why the agent's `tf.random.Generator` and not `tf.random.shuffle`: the generator's state is a
variable in the checkpoint, so a resumed run draws the same permutations as an uninterrupted
one, and the permutation can be drawn inside a compiled update loop (no Python randomness).
"""

from __future__ import annotations

from collections.abc import Mapping

import tensorflow as tf


def minibatch_indices(
    generator: tf.random.Generator, num_samples: int, num_minibatches: int
) -> tf.Tensor:
    """A random permutation of range(num_samples) cut into [num_minibatches, size] rows: one epoch
    visits every sample once (the num_samples % num_minibatches left at the end are skipped)."""
    size = num_samples // num_minibatches
    permutation = tf.argsort(generator.uniform([num_samples]))
    return tf.reshape(permutation[: num_minibatches * size], [num_minibatches, size])


def shuffle(
    samples: Mapping[str, tf.Tensor], generator: tf.random.Generator
) -> dict[str, tf.Tensor]:
    """The samples ([B, ...] each, same B) in one random order shared by every field."""
    num_samples = _num_samples(samples)
    permutation = tf.argsort(generator.uniform([num_samples]))
    return {key: tf.gather(value, permutation) for key, value in samples.items()}


def minibatches(
    samples: Mapping[str, tf.Tensor], generator: tf.random.Generator, num_minibatches: int
) -> list[dict[str, tf.Tensor]]:
    """One epoch of `num_minibatches` disjoint minibatches in a fresh random order, as a Python list
    (a compiled loop gathers `minibatch_indices` rows itself)."""
    indices = minibatch_indices(generator, _num_samples(samples), num_minibatches)
    return [
        {key: tf.gather(value, indices[k]) for key, value in samples.items()}
        for k in range(num_minibatches)
    ]


def _num_samples(samples: Mapping[str, tf.Tensor]) -> int:
    sizes = {int(tf.convert_to_tensor(value).shape[0]) for value in samples.values()}
    if len(sizes) != 1:
        raise ValueError(f"samples must share their first dimension, got sizes {sorted(sizes)}")
    return sizes.pop()
