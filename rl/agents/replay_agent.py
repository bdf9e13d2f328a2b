"""Shared plumbing of agents that learn from a replay memory (DQN, DDPG/TD3, SAC).

Transitions pass through an `NStepAccumulator` into the registered replay (`hparams.memory`);
`update` samples `gradient_steps` batches up front ([K, B, ...]) and runs all K gradient steps
in ONE compiled call of the subclass's `_train_on_batches`; with prioritized replay the
returned |TD errors| ([K, B]) become the sampled rows' new priorities after the call.
"""

from __future__ import annotations

import inspect

import numpy as np
import tensorflow as tf

from rl.agents.base import Agent
from rl.hparams import as_schedule
from rl.memory import NStepAccumulator
from rl.registry import get_memory
from rl.types import Batch


class ReplayAgent(Agent):
    """Agent with a replay memory. Subclasses call `_build_replay` in `_build` and implement
    `_train_on_batches(batch) -> dict` whose "td_error" output is [K, B]."""

    def _build_replay(self, action_shape: tuple[int, ...], action_dtype: np.dtype, n_step: int):
        hp, spec = self.hparams, self.spec
        self.per_beta = as_schedule(hp.per_beta)
        fields = {
            "obs": (spec.obs_shape, spec.obs_dtype),
            "action": (action_shape, np.dtype(action_dtype)),
            "reward": ((), np.dtype(np.float32)),
            "next_obs": (spec.obs_shape, spec.obs_dtype),
            "discount": ((), np.dtype(np.float32)),
        }
        memory_cls = get_memory(hp.memory)
        options = {"alpha": hp.per_alpha, "epsilon": hp.per_epsilon}
        accepted = inspect.signature(memory_cls).parameters
        self.replay = memory_cls(
            capacity=hp.buffer_size,
            fields=fields,
            seed=self.seed,
            **{k: v for k, v in options.items() if k in accepted},
        )
        self.n_step = NStepAccumulator(
            n=n_step, gamma=hp.gamma, num_envs=spec.num_envs, fields=fields
        )
        obs_dtype = tf.as_dtype(spec.obs_dtype)
        batch_spec = {
            "obs": tf.TensorSpec([None, None, *spec.obs_shape], obs_dtype),
            "action": tf.TensorSpec([None, None, *action_shape], tf.as_dtype(action_dtype)),
            "reward": tf.TensorSpec([None, None], tf.float32),
            "next_obs": tf.TensorSpec([None, None, *spec.obs_shape], obs_dtype),
            "discount": tf.TensorSpec([None, None], tf.float32),
            "weights": tf.TensorSpec([None, None], tf.float32),
        }
        self._train_fn = tf.function(
            self._train_on_batches, input_signature=[batch_spec], jit_compile=hp.jit_compile
        )

    def _observe(self, transition: Batch) -> None:
        self._add_to_replay(self.n_step.add(**transition))

    def _end_all_episodes(self) -> None:
        self._add_to_replay(self.n_step.flush())

    def _add_to_replay(self, completed: Batch) -> None:
        if len(completed["reward"]):
            self.replay.add_batch(completed)

    def _ready_to_update(self) -> bool:
        hp = self.hparams
        return (
            len(self.replay) >= max(hp.batch_size, 1)
            and int(self.env_steps.numpy()) >= hp.learning_starts
        )

    def _sample_and_train(self) -> dict[str, tf.Tensor]:
        """K sampled batches, one compiled call, priorities written back."""
        hp = self.hparams
        beta = float(self.per_beta(self.env_steps))
        batch = self.replay.sample(hp.batch_size, num_batches=hp.gradient_steps, beta=beta)
        indices = batch.pop("indices")
        out = self._train_fn(batch)
        if hp.memory == "prioritized":
            self.replay.update_priorities(indices, np.abs(out["td_error"].numpy()))
        return out

    def _numpy_state_parts(self) -> dict[str, object]:
        return {"replay": self.replay, "n_step": self.n_step}

    def _train_on_batches(self, batch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        raise NotImplementedError
