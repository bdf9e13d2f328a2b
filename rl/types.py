"""Shared type aliases, so signatures say what travels between components."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

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


class VectorStep(NamedTuple):
    """One step of a vector env as the memories take it ([num_envs, ...] arrays each); `next_obs`
    is the true next observation (`final_obs` where an episode ended)."""

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    next_obs: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray

    @classmethod
    def of(cls, transition: Mapping[str, np.ndarray]) -> VectorStep:
        """The step in an agent's `observe` transition (its other keys left out)."""
        return cls(*(transition[name] for name in cls._fields))
