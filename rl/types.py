"""Shared type aliases, so signatures say what travels between components."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

# A batch of named arrays: transitions from an env step, samples from replay, ...
Batch = dict[str, np.ndarray]
TensorBatch = dict[str, tf.Tensor]
# Scalars to log, keyed by a "section/name" path (e.g. "train/loss").
Metrics = dict[str, float]
