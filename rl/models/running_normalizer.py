"""Running mean/variance statistics: observation standardization inside a network, and the
reward scaling of Stable-Baselines3's `VecNormalize` for agents that keep their own rollout.

SB3's `VecNormalize` arithmetic (Chan et al.'s parallel update from mean 0, variance 1, count
1e-4; clipping to +-10; rewards divided by the running std of the discounted return), in the
agent since our envs stay unwrapped. `ObservationNormalizer` is a Keras layer, so checkpoints
carry its statistics and greedy evaluation uses them frozen; `RewardScaler` is numpy.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import tensorflow as tf

EPSILON = 1e-8  # VecNormalize's epsilon, inside the square root
CLIP = 10.0  # VecNormalize's clip_obs and clip_reward
INITIAL_COUNT = 1e-4  # RunningMeanStd's initial count (mean 0, variance 1)


def combine_moments(
    mean: np.ndarray | tf.Tensor,
    var: np.ndarray | tf.Tensor,
    count: float | tf.Tensor,
    batch_mean: np.ndarray | tf.Tensor,
    batch_var: np.ndarray | tf.Tensor,
    batch_count: float | tf.Tensor,
) -> tuple:
    """(mean, variance, count) of the union of two samples given each one's moments (Chan,
    Golub & LeVeque 1979; SB3's `RunningMeanStd.update_from_moments`). Works on numpy and TF."""
    delta = batch_mean - mean
    total = count + batch_count
    new_mean = mean + delta * batch_count / total
    m2 = var * count + batch_var * batch_count + delta * delta * count * batch_count / total
    return new_mean, m2 / total, total


class ObservationNormalizer(tf.keras.layers.Layer):
    """obs -> clip((obs - mean) / sqrt(var + 1e-8), -10, 10) with running statistics."""

    def __init__(self, shape: tuple[int, ...], **kwargs) -> None:
        super().__init__(**kwargs)
        shape = tuple(int(d) for d in shape)
        self.mean = self.add_weight(shape=shape, initializer="zeros", trainable=False, name="mean")
        self.var = self.add_weight(shape=shape, initializer="ones", trainable=False, name="var")
        count_init = tf.keras.initializers.Constant(INITIAL_COUNT)
        self.count = self.add_weight(
            shape=(), initializer=count_init, trainable=False, name="count"
        )

    def call(self, obs: tf.Tensor) -> tf.Tensor:
        scaled = (tf.cast(obs, tf.float32) - self.mean) / tf.sqrt(self.var + EPSILON)
        return tf.clip_by_value(scaled, -CLIP, CLIP)

    def update(self, obs: tf.Tensor) -> None:
        """Adds a batch of observations [B, *shape] to the statistics."""
        obs = tf.cast(obs, tf.float32)
        batch_mean = tf.reduce_mean(obs, axis=0)
        batch_var = tf.math.reduce_variance(obs, axis=0)
        batch_count = tf.cast(tf.shape(obs)[0], tf.float32)
        mean, var, count = combine_moments(
            self.mean, self.var, self.count, batch_mean, batch_var, batch_count
        )
        self.mean.assign(mean)
        self.var.assign(var)
        self.count.assign(count)


class RewardScaler:
    """VecNormalize's reward scaling: reward / sqrt(Var[discounted return] + 1e-8), clipped, with a
    per-env discounted return zeroed after each episode end."""

    def __init__(self, num_envs: int, gamma: float) -> None:
        self.gamma = float(gamma)
        self.returns = np.zeros([num_envs], np.float64)
        self.var = np.ones([], np.float64)
        self.mean = np.zeros([], np.float64)
        self.count = np.array(INITIAL_COUNT, np.float64)

    def __call__(self, reward: np.ndarray, done: np.ndarray) -> np.ndarray:
        """Scaled rewards [num_envs] (float32) for one env step; `done` ends the returns."""
        self.returns = self.returns * self.gamma + np.asarray(reward, np.float64)
        self.mean, self.var, self.count = combine_moments(
            self.mean, self.var, self.count, self.returns.mean(), self.returns.var(),
            float(self.returns.size),
        )  # fmt: skip
        scaled = np.clip(np.asarray(reward) / np.sqrt(self.var + EPSILON), -CLIP, CLIP)
        self.returns[np.asarray(done, bool)] = 0.0
        return scaled.astype(np.float32)

    def state_dict(self) -> dict[str, np.ndarray]:
        return {
            "returns": self.returns.copy(),
            "mean": np.asarray(self.mean),
            "var": np.asarray(self.var),
            "count": np.asarray(self.count),
        }

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        returns = np.asarray(state["returns"], np.float64)
        if returns.shape != self.returns.shape:
            raise ValueError(
                f"checkpoint reward-scaler returns are {list(returns.shape)}, expected "
                f"{list(self.returns.shape)} (num_envs changed?)"
            )
        self.returns[...] = returns
        self.mean = np.asarray(state["mean"], np.float64)
        self.var = np.asarray(state["var"], np.float64)
        self.count = np.asarray(state["count"], np.float64)
