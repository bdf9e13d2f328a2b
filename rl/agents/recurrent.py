"""The recurrent-state contract: what an agent whose actions depend on an RNN state keeps, and
when that state is reset (used by `ppo_recurrent` and `drqn`).

A recurrent agent sets `recurrent = True` (this mixin does) and then:

- keeps the training envs' states in ONE variable it owns, `recurrent_state` [num_envs, S]
  (S = the core's flat state size). Being a variable, compiled acting reads and writes it, and
  checkpoints carry it;
- is told where episodes start: the driver passes `episode_start` [num_envs] (bool) to
  `act_with_info(obs, episode_start)`, True for every env right after `Driver.reset` (run start,
  checkpoint cuts) and for every env whose previous step ended its episode (terminated or
  truncated). `_start_episodes` zeroes those rows before the agent acts;
- zeroes every row in `end_all_episodes` too (the in-process engine's episode cut), so a checkpoint
  always holds the state an uninterrupted run continues from;
- acts greedily from a SEPARATE state, kept in Python between `greedy_actions` calls (the
  evaluation env has its own number of copies): `evaluate` passes `episode_start` (all True on
  its first step, then the copies whose episode just ended). This state is transient and not
  checkpointed: every evaluation starts from zeros.

The subclass implements `_greedy_step(obs, state) -> (action, new_state)` (TF code) and reads
and writes `recurrent_state` in its own `_act` / `_act_with_info`.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rl.errors import UserError
from rl.models.recurrent import reset_where


class RecurrentStateMixin:
    """Mixin for `Agent` subclasses with a carried RNN state; list it before the agent base."""

    recurrent = True

    def _build_recurrent_state(self, state_size: int) -> None:
        """Creates `recurrent_state` and the compiled greedy step. Call from `_build`."""
        spec = self.spec
        if spec.env_id.startswith("tf/"):
            # The compiled path's programs (rl/compiled) act and learn without carried state.
            raise UserError(
                f"agent {self.hparams.agent!r} carries a recurrent state, which the compiled "
                f"path for TF-ops envs ({spec.env_id!r}) does not support; use a gymnasium env "
                "(e.g. MaskedCartPole-v1)"
            )
        self.state_size = int(state_size)
        # Unknown batch dimension: `train.py --training False` builds the agent for the test env
        # (another number of copies) and still restores the training checkpoint into it.
        self.recurrent_state = tf.Variable(
            tf.zeros([spec.num_envs, self.state_size]),
            shape=tf.TensorShape([None, self.state_size]),
            trainable=False,
            name="recurrent_state",
        )
        self._greedy_state: tf.Tensor | None = None
        self._greedy_step_fn = tf.function(
            self._greedy_step_with_starts,
            input_signature=[
                tf.TensorSpec([None, *spec.obs_shape], tf.as_dtype(spec.obs_dtype)),
                tf.TensorSpec([None, self.state_size], tf.float32),
                tf.TensorSpec([None], tf.bool),
            ],
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
        state = self._greedy_state
        if state is None or state.shape[0] != batch:
            state = tf.zeros([batch, self.state_size])
            episode_start = np.ones(batch, bool)
        elif episode_start is None:
            episode_start = np.zeros(batch, bool)
        action, self._greedy_state = self._greedy_step_fn(
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
