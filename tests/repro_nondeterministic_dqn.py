"""A test-only plugin for tests/test_repro.py: a DQN with one deliberately nondeterministic op.

A run names it as `env=repro_nondeterministic_dqn:CartPoleEnv, agent=nondeterministic_dqn`
(with tests/ on PYTHONPATH): the trainer imports an env given as `module:Class` before it builds
the agent, so importing this module for its env class also registers the agent. Production
agents carry no test hook.

From env step NOISE_FROM_STEP on, every update adds `tf.random` noise seeded from OS entropy
(not from the agent's seeded generator) to one variable: the online network's advantage-head
bias. It is added after the update and a checkpoint follows the update, so at the first
checkpoint at or after NOISE_FROM_STEP that bias is the only thing two runs disagree on.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf
from gymnasium.envs.classic_control import CartPoleEnv

from rl import registry
from rl.agents.dqn import DQN

__all__ = ["CartPoleEnv", "NondeterministicDQN", "NOISE_FROM_STEP"]

NOISE_FROM_STEP = 200


class NondeterministicDQN(DQN):
    """DQN whose updates from NOISE_FROM_STEP on perturb the advantage bias by ~1e-3."""

    def _update(self):
        metrics = super()._update()
        if int(self.env_steps.numpy()) >= NOISE_FROM_STEP:
            bias = self.q_network.trainable_variables[-1]  # dueling head: advantage bias
            # TF refuses a non-deterministic Generator under op determinism; OS entropy for the
            # seed of a stateless op does the same thing.
            seed = np.frombuffer(os.urandom(8), dtype=np.int32)
            noise = tf.random.stateless_normal(bias.shape, seed=seed)
            bias.assign_add(1e-3 * noise)
        return metrics


if "nondeterministic_dqn" not in registry.agents:
    registry.register_agent("nondeterministic_dqn", NondeterministicDQN)
