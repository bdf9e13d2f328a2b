"""Seeds derived from a run's seed, so every random stream is reproducible and distinct."""

from __future__ import annotations

import hashlib

import tensorflow as tf


def derive_seed(seed: int, *names: object) -> int:
    """A stable 31-bit seed for the stream called `names` of run `seed` (hash, not seed+k)."""
    text = ":".join([str(seed), *map(str, names)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") & 0x7FFFFFFF


def seed_everything(seed: int, deterministic: bool) -> None:
    """Seeds Python, numpy and TF global RNGs (weight init); optionally deterministic ops."""
    tf.keras.utils.set_random_seed(seed)
    if deterministic:
        tf.config.experimental.enable_op_determinism()
