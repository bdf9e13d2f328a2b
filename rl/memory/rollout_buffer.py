"""Rollout buffer for on-policy agents (A2C, PPO, REINFORCE): one batch of T vector-env steps.

To tell termination from truncation (Pardo et al. 2018, https://arxiv.org/abs/1712.00378) it
keeps `final_obs` where an env was truncated and `last_next_obs` of episodes still running.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rl.memory.array_state import load_arrays
from rl.registry import register_memory
from rl.types import Batch, VectorStep

# Fields stored per step; shapes after [T, num_envs]. Filled in from the constructor arguments.
_SCALAR_FIELDS = {
    "reward": np.float32,
    "terminated": np.bool_,
    "truncated": np.bool_,
    "log_prob": np.float32,
    "value": np.float32,
}


@register_memory("rollout")
class RolloutBuffer:
    """T vector-env steps of on-policy data, with state_dict/load_state_dict for checkpoints."""

    def __init__(
        self,
        num_steps: int,
        num_envs: int,
        obs_shape: tuple[int, ...],
        obs_dtype: np.dtype,
        action_shape: tuple[int, ...],
        action_dtype: np.dtype,
    ) -> None:
        self.num_steps, self.num_envs = int(num_steps), int(num_envs)
        lead = (self.num_steps, self.num_envs)
        obs_shape, action_shape = tuple(obs_shape), tuple(action_shape)
        self._arrays: dict[str, np.ndarray] = {
            "obs": np.zeros(lead + obs_shape, np.dtype(obs_dtype)),
            "action": np.zeros(lead + action_shape, np.dtype(action_dtype)),
            **{name: np.zeros(lead, dtype) for name, dtype in _SCALAR_FIELDS.items()},
            "final_obs": np.zeros(lead + obs_shape, np.dtype(obs_dtype)),
            "last_next_obs": np.zeros((self.num_envs, *obs_shape), np.dtype(obs_dtype)),
        }
        self._t = 0

    def __len__(self) -> int:
        return self._t

    def full(self) -> bool:
        return self._t == self.num_steps

    def add(
        self, step: VectorStep, log_prob: np.ndarray | None = None, value: np.ndarray | None = None
    ) -> None:
        """Stores one vector step. `next_obs` is the true next observation (final at ends).
        `log_prob` and `value` of the acting policy are optional (zeros if not given)."""
        obs, action, reward, next_obs, terminated, truncated = step
        if self.full():
            raise RuntimeError(
                f"RolloutBuffer is full ({self.num_steps} steps); call reset() after learning"
            )
        t, a = self._t, self._arrays
        for name, value_ in (
            ("obs", obs),
            ("action", action),
            ("reward", reward),
            ("terminated", terminated),
            ("truncated", truncated),
            ("log_prob", np.zeros(self.num_envs, np.float32) if log_prob is None else log_prob),
            ("value", np.zeros(self.num_envs, np.float32) if value is None else value),
        ):
            value_ = np.asarray(value_)
            if value_.shape != a[name].shape[1:]:
                raise ValueError(
                    f"RolloutBuffer.add: {name} has shape {list(value_.shape)}, "
                    f"expected {list(a[name].shape[1:])}"
                )
            a[name][t] = value_
        truncated = np.asarray(truncated, bool) & ~np.asarray(terminated, bool)
        a["truncated"][t] = truncated
        a["final_obs"][t] = np.where(
            truncated.reshape(truncated.shape + (1,) * (next_obs.ndim - 1)), next_obs, 0
        )
        a["last_next_obs"][...] = next_obs
        self._t += 1

    def truncate_all(self) -> None:
        """Ends every running episode at the latest step as a truncation (an episode cut)."""
        if self._t == 0:
            return
        a, t = self._arrays, self._t - 1
        running = ~(a["terminated"][t] | a["truncated"][t])
        a["truncated"][t] |= running
        a["final_obs"][t][running] = a["last_next_obs"][running]

    def data(self) -> Batch:
        """Views of the stored arrays ([T, num_envs, ...]; `last_next_obs` is [num_envs, ...])."""
        return dict(self._arrays)

    def reset(self) -> None:
        self._t = 0
        for name in ("terminated", "truncated"):
            self._arrays[name][...] = False
        self._arrays["final_obs"][...] = 0

    def state_dict(self) -> dict[str, np.ndarray]:
        state = {name: array.copy() for name, array in self._arrays.items()}
        state["t"] = np.array(self._t, np.int64)
        return state

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        load_arrays(self._arrays, state, "rollout")
        self._t = int(state["t"])
