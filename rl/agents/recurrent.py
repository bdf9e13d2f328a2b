"""The recurrent-state contract (used by `ppo_recurrent` and `drqn`).

The training envs' states live in one variable, `recurrent_state` [num_envs, S], which compiled
acting reads and writes and checkpoints carry; rows are zeroed where episodes start. Greedy
acting uses a separate transient state (the evaluation env has its own number of copies).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rl.errors import UserError
from rl.hparams.compiled_path import runs_compiled
from rl.models.recurrent import reset_where


class RecurrentStateMixin:
    """Mixin for `Agent` subclasses with a carried RNN state; list it before the agent base."""

    recurrent = True

    def _build_recurrent_state(self, state_size: int) -> None:
        """Creates `recurrent_state` and the compiled greedy step. Call from `_build`."""
        spec = self.spec
        if runs_compiled(spec.env_id):
            raise UserError(
                f"agent {self.hparams.agent!r} carries a recurrent state, which the compiled "
                f"path for TF-ops envs ({spec.env_id!r}) does not support; use a gymnasium env "
                "(e.g. MaskedCartPole-v1)"
            )
        self.state_size = int(state_size)
        # Unknown batch dimension: `--training False` restores it into the test env's agent.
        self.recurrent_state = tf.Variable(
            tf.zeros([spec.num_envs, self.state_size]),
            shape=tf.TensorShape([None, self.state_size]),
            trainable=False,
            name="recurrent_state",
        )
        self.greedy_state: tf.Tensor | None = None
        self._greedy_step_fn = tf.function(
            self._greedy_step_with_starts,
            input_signature=[
                tf.TensorSpec([None, *spec.obs_shape], tf.as_dtype(spec.obs_dtype)),
                tf.TensorSpec([None, self.state_size], tf.float32),
                tf.TensorSpec([None], tf.bool),
            ],
            autograph=False,
        )

    # ------------------------------------------------------------------ training state
    def _start_episodes(self, episode_start: tf.Tensor) -> None:
        self.recurrent_state.assign(reset_where(self.recurrent_state, episode_start))

    def _reset_recurrent_state(self) -> None:
        """Every env starts over (the in-process engine cut all episodes)."""
        self.recurrent_state.assign(tf.zeros_like(self.recurrent_state))

    # -------------------------------------------------------------------- greedy state
    def _greedy_actions(self, obs: np.ndarray, episode_start: np.ndarray | None) -> np.ndarray:
        obs = np.asarray(obs)
        batch = obs.shape[0]
        state = self.greedy_state
        if state is None or state.shape[0] != batch:
            state = tf.zeros([batch, self.state_size])
            episode_start = np.ones(batch, bool)
        elif episode_start is None:
            episode_start = np.zeros(batch, bool)
        action, self.greedy_state = self._greedy_step_fn(
            obs, state, np.asarray(episode_start, bool)
        )
        return action.numpy()

    def _greedy_step_with_starts(
        self, obs: tf.Tensor, state: tf.Tensor, episode_start: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor]:
        return self._greedy_step(obs, reset_where(state, episode_start))

    @property
    def policy_state_size(self) -> int:
        return self.state_size

    def _greedy_policy_step(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        return self._greedy_step(obs, state)

    def _greedy_step(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Greedy actions for `obs` [B, ...] from `state` [B, S], and the next state."""
        raise NotImplementedError
