"""Turns a vector env's 1-step stream into n-step transitions before they enter the replay.

n-step returns (Sutton 1988; Rainbow, https://arxiv.org/abs/1710.02298) folded in at insert
time keep the replay and the TD loss unchanged: a stored transition is (obs_t, action_t,
R = sum_{k<m} gamma^k r_{t+k}, next_obs = obs_{t+m}, discount). An episode end flushes the
pending ones with m < n; `discount` is 0 if the episode terminated within them, else gamma^m
(a truncation bootstraps from the true final observation). The windows are checkpointed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rl.memory.array_state import load_arrays
from rl.memory.ring_storage import FieldSpec
from rl.types import Batch, VectorStep


class NStepAccumulator:
    """Per-env windows of the last n steps; `add` returns the n-step transitions completed."""

    def __init__(self, n: int, gamma: float, num_envs: int, fields: FieldSpec) -> None:
        """`fields` is the replay's field spec; only "obs" and "action" are read (next_obs has
        obs's spec; reward and discount are float32)."""
        if int(n) < 1 or int(num_envs) < 1:
            raise ValueError(f"n and num_envs must be >= 1, got n={n}, num_envs={num_envs}")
        self.n = int(n)
        self.gamma = float(gamma)
        self.num_envs = int(num_envs)
        obs_shape, obs_dtype = fields["obs"]
        action_shape, action_dtype = fields["action"]
        # Window of env e: slots head[e], head[e]+1, ... (mod n) hold its `pending[e]` steps.
        self._obs = np.zeros((num_envs, n, *obs_shape), dtype=obs_dtype)
        self._action = np.zeros((num_envs, n, *action_shape), dtype=action_dtype)
        self._reward = np.zeros((num_envs, n), dtype=np.float64)
        # Latest next_obs of every env: what `flush` bootstraps from.
        self._next_obs = np.zeros((num_envs, *obs_shape), dtype=obs_dtype)
        self._head = np.zeros(num_envs, dtype=np.int64)
        self._pending = np.zeros(num_envs, dtype=np.int64)
        self._env_range = np.arange(num_envs)
        self._powers = self.gamma ** np.arange(n + 1)  # gamma^0 .. gamma^n

    def add(self, step: VectorStep, valid: np.ndarray | None = None) -> Batch:
        """Takes one vector-env step and returns the completed transitions (grouped by env, oldest
        first). `next_obs` must be the true next observation (`final_obs` where an episode ended);
        `valid` masks env slots that took no real step (NEXT_STEP autoreset's reset step)."""
        obs, action, reward, next_obs, terminated, truncated = step
        num_envs, n = self.num_envs, self.n
        obs = self._check("obs", obs, self._obs.shape[2:])
        action = self._check("action", action, self._action.shape[2:])
        reward = self._check("reward", reward, ())
        next_obs = self._check("next_obs", next_obs, self._obs.shape[2:])
        terminated = self._check("terminated", terminated, ()).astype(bool)
        truncated = self._check("truncated", truncated, ()).astype(bool)
        if n == 1 and valid is None:
            # Nothing is ever pending with n = 1: skip the window bookkeeping (hot path).
            return {
                "obs": obs.astype(self._obs.dtype, copy=False),
                "action": action.astype(self._action.dtype, copy=False),
                "reward": reward.astype(np.float32, copy=False),
                "next_obs": next_obs,
                "discount": np.where(terminated, 0.0, self.gamma).astype(np.float32),
            }
        envs = self._env_range
        if valid is not None:
            valid = self._check("valid", valid, ()).astype(bool)
            envs = envs[valid]

        # 1. Append this step to each (valid) env's window.
        slot = (self._head[envs] + self._pending[envs]) % n
        self._obs[envs, slot] = obs[envs]
        self._action[envs, slot] = action[envs]
        self._reward[envs, slot] = reward[envs]
        self._next_obs[envs] = next_obs[envs]
        self._pending[envs] += 1

        # 2. Emit all pending transitions of an ended episode, else the oldest of a full window.
        done = np.zeros(num_envs, dtype=bool)
        done[envs] = terminated[envs] | truncated[envs]
        full = np.zeros(num_envs, dtype=bool)
        full[envs] = self._pending[envs] == n
        out = self._emit(np.where(done, self._pending, full.astype(np.int64)), terminated)

        # 3. Drop what was emitted: an ended episode empties its window, a full one slides by 1.
        slide = full & ~done
        self._head[slide] = (self._head[slide] + 1) % n
        self._pending[slide] -= 1
        self._head[done] = 0
        self._pending[done] = 0
        return out

    def flush(self) -> Batch:
        """Ends every env's episode as a truncation (a cut): returns the pending transitions."""
        out = self._emit(self._pending.copy(), np.zeros(self.num_envs, dtype=bool))
        self._head[:] = 0
        self._pending[:] = 0
        return out

    def _emit(self, count: np.ndarray, terminated: np.ndarray) -> Batch:
        """The `count[e]` oldest pending transitions of every env e, grouped by env."""
        n = self.n
        rows = int(count.sum())
        # Row r is the j-th oldest pending step of env e, and covers m = pending[e] - j steps.
        env = np.repeat(self._env_range, count)
        j = np.arange(rows) - np.repeat(np.cumsum(count) - count, count)
        m = self._pending[env] - j
        start = (self._head[env] + j) % n
        k = np.arange(n)
        slots = (start[:, None] + k) % n
        rewards = np.where(k < m[:, None], self._reward[env[:, None], slots], 0.0)
        return {
            "obs": self._obs[env, start],
            "action": self._action[env, start],
            "reward": (rewards @ self._powers[:n]).astype(np.float32),
            "next_obs": self._next_obs[env],
            "discount": np.where(terminated[env], 0.0, self._powers[m]).astype(np.float32),
        }

    def pending(self) -> np.ndarray:
        """Number of steps per env waiting for their n-step transition ([num_envs] int64)."""
        return self._pending.copy()

    def _window(self) -> dict[str, np.ndarray]:
        """The arrays that hold the pending steps, by checkpoint name."""
        names = ("obs", "action", "reward", "next_obs", "head", "pending")
        return {name: getattr(self, "_" + name) for name in names}

    def state_dict(self) -> dict[str, np.ndarray]:
        return {
            "n": np.array(self.n, dtype=np.int64),
            "gamma": np.array(self.gamma, dtype=np.float64),
            **{name: array.copy() for name, array in self._window().items()},
        }

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        if int(state["n"]) != self.n or float(state["gamma"]) != self.gamma:
            raise ValueError(
                f"checkpoint n-step accumulator has n={int(state['n'])}, "
                f"gamma={float(state['gamma'])}; this one n={self.n}, gamma={self.gamma}"
            )
        load_arrays(self._window(), state, "n-step")

    def _check(self, name: str, value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        value = np.asarray(value)
        if value.shape != (self.num_envs, *shape):
            raise ValueError(
                f"NStepAccumulator.add: {name} has shape {list(value.shape)}, "
                f"expected {[self.num_envs, *shape]}"
            )
        return value
