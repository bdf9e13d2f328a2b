"""The training envs' state as tf.Variables.

Why variables: one `tf.train.Checkpoint` saves them with the agent, so a restored run continues
mid-episode exactly where it stopped (no episode cut, unlike the Python-env trainer). A TF-ops
env is a pure per-row function of its state, so the N envs of each of S seeds can also be ONE
set of S * N rows that steps as one batch, every row computing exactly what it would alone
(`CompiledPPOSeeds.env_vars`).
"""

from __future__ import annotations

import functools

import tensorflow as tf

from rl.envs.tf import EnvState, TFEnv


class EnvVariables(tf.Module):
    """The `EnvState` of one seed's training envs and running episode stats, as tf.Variables (uint32
    RNG words bit-cast to int32, which checkpoint and assign on every device)."""

    def __init__(self, env: TFEnv, num_envs: int, seed: int) -> None:
        super().__init__(name="env_variables")
        state, _ = env.reset(seed, num_envs)
        variable = functools.partial(tf.Variable, trainable=False)
        self.physics = variable(state.physics, name="physics")
        self.elapsed = variable(state.elapsed, name="elapsed")
        self.key = variable(tf.bitcast(state.key, tf.int32), name="key")
        self.episode = variable(tf.bitcast(state.episode, tf.int32), name="episode")
        self.episode_return = variable(tf.zeros([num_envs], tf.float32), name="episode_return")
        self.episode_length = variable(tf.zeros([num_envs], tf.int32), name="episode_length")

    def read(self) -> EnvState:
        return EnvState(
            self.physics.read_value(),
            self.elapsed.read_value(),
            tf.bitcast(self.key.read_value(), tf.uint32),
            tf.bitcast(self.episode.read_value(), tf.uint32),
        )

    def write(self, state: EnvState) -> None:
        self.physics.assign(state.physics)
        self.elapsed.assign(state.elapsed)
        self.key.assign(tf.bitcast(state.key, tf.int32))
        self.episode.assign(tf.bitcast(state.episode, tf.int32))
