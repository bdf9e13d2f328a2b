"""Shared type aliases, so signatures say what travels between components."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import tensorflow as tf

# A batch of named arrays: transitions from an env step, samples from replay, ...
Batch = dict[str, np.ndarray]
TensorBatch = dict[str, tf.Tensor]
# Scalars to log, keyed by a "section/name" path (e.g. "train/loss").
Metrics = dict[str, float]
# Hparam name -> the tensor a trace reads instead of the set's value, or None (the set's): a
# population member's numbers (rl.compiled.population).
HparamTensors = Callable[[str], tf.Tensor | None]
# What a loss returns: the scalar to minimize and, by name, the scalars it reports beside it
# (logged as train/<name>; DQN's also holds the per-sample TD errors its priorities come from).
LossAndAux = tuple[tf.Tensor, dict[str, tf.Tensor]]
