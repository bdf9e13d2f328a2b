"""Replay for frame-stacked image observations (Atari) that stores every frame ONCE.

A plain replay of 4-frame stacks keeps 8 copies of each frame (obs and next_obs). Here each env
copy has a ring of single uint8 frames, one row per step, and stacks are rebuilt by index at
sample time, as Dopamine's circular replay does (https://arxiv.org/abs/1812.06110).

Rows of one env copy, in time order:

    [pad] x (K-1)  [obs_0] [obs_1] ... [obs_T-1]  [final]  [pad] x (K-1) [obs_0'] ...

An episode's first observation writes K-1 "pad" rows and its obs row, so any obs row's stack is
the K rows ending at it and never reads the previous episode; a "final" row holds the last
observation, so truncations bootstrap from the true last state. A transition at obs row t runs
its n-step return over m = min(n, steps left) rows (so this replay also does `NStepAccumulator`'s
job). Rows that cannot start a complete transition hold priority 0 in the `SumTree`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np

from rl.memory.prioritized import PrioritizedSampler
from rl.types import Batch, VectorStep

PAD, OBS, FINAL = 0, 1, 2


class FrameReplay:
    """Frame-deduplicating replay with uniform or proportional prioritized sampling."""

    def __init__(
        self,
        capacity: int,
        obs_shape: tuple[int, ...],
        action_shape: tuple[int, ...],
        action_dtype: np.dtype,
        num_envs: int,
        n_step: int,
        gamma: float,
        seed: int,
        prioritized: bool = False,
        alpha: float = 0.6,
        epsilon: float = 1e-6,
    ) -> None:
        if len(obs_shape) != 3:
            raise ValueError(f"FrameReplay needs [H, W, stack] observations, got {obs_shape}")
        self.frame_shape = tuple(int(d) for d in obs_shape[:-1])
        self.stack = int(obs_shape[-1])
        self.num_envs, self.n_step, self.gamma = int(num_envs), int(n_step), float(gamma)
        if self.n_step < 1 or self.num_envs < 1:
            raise ValueError(f"n_step and num_envs must be >= 1, got {n_step}, {num_envs}")
        self.rows_per_env = int(capacity) // self.num_envs
        # A row is validated up to n + K rows later, maybe in one call: the ring must not lap it.
        minimum = 2 * (self.n_step + self.stack) + 2
        if self.rows_per_env < minimum:
            raise ValueError(
                f"FrameReplay capacity {capacity} gives {self.rows_per_env} rows per env copy; "
                f"it needs at least {minimum} (buffer_size >= {minimum * self.num_envs})"
            )
        self.prioritized = bool(prioritized)
        # The sum tree over all rows (0: not drawable); uniform replay gives drawable rows 1.
        self._priorities = PrioritizedSampler(self.num_envs * self.rows_per_env, alpha, epsilon)
        rows = (self.num_envs, self.rows_per_env)
        self._frames = np.zeros(rows + self.frame_shape, np.uint8)
        self._action = np.zeros(rows + tuple(action_shape), np.dtype(action_dtype))
        self._reward = np.zeros(rows, np.float32)
        self._terminated = np.zeros(rows, bool)
        self._kind = np.zeros(rows, np.int8)
        self._valid = np.zeros(rows, bool)
        self._written = np.zeros(self.num_envs, np.int64)  # rows ever written per env copy
        self._in_episode = np.zeros(self.num_envs, bool)
        self._episode_obs_rows = np.zeros(self.num_envs, np.int64)
        self._last_obs = np.zeros((self.num_envs, *obs_shape), np.uint8)  # latest next_obs
        self._rng = np.random.Generator(np.random.PCG64(seed))
        self._powers = self.gamma ** np.arange(self.n_step + 1)
        self._updates: list[tuple[int, int, float]] = []  # (env, row, tree value), in order

    # ---------------------------------------------------------------------- sizes
    @property
    def capacity(self) -> int:
        return self.num_envs * self.rows_per_env

    def __len__(self) -> int:
        return int(self._valid.sum())  # transitions that can be drawn now

    @property
    def nbytes(self) -> int:
        """Bytes held: rows, per-row flags and the sum tree."""
        arrays = (self._frames, self._action, self._reward, self._terminated, self._kind)
        tree = self._priorities.tree._sums.nbytes + self._priorities.tree._mins.nbytes
        return sum(a.nbytes for a in arrays) + self._valid.nbytes + tree

    # ---------------------------------------------------------------------- adding
    def add(self, step: VectorStep) -> None:
        """One vector-env step; `next_obs` is the TRUE next observation (`final_obs` at ends)."""
        obs, action, reward, next_obs, terminated, truncated = step
        obs, next_obs = np.asarray(obs), np.asarray(next_obs)
        expected = (self.num_envs, *self.frame_shape, self.stack)
        for name, value in (("obs", obs), ("next_obs", next_obs)):
            if value.shape != expected or value.dtype != np.uint8:
                raise ValueError(
                    f"{name} is {value.dtype}{list(value.shape)}, want uint8{expected}"
                )
        if not np.array_equal(next_obs[..., :-1], obs[..., 1:]):
            raise ValueError(
                "next_obs does not shift obs by one frame along the last axis: these "
                "observations are not a frame stack, use a plain replay"
            )
        action = np.asarray(action)
        done = np.asarray(terminated, bool) | np.asarray(truncated, bool)
        for e in range(self.num_envs):
            if not self._in_episode[e]:
                for k in range(self.stack - 1):
                    self._write_row(e, obs[e, ..., k], PAD)
                self._in_episode[e] = True
                self._episode_obs_rows[e] = 0
            elif not np.array_equal(obs[e], self._last_obs[e]):
                raise ValueError(
                    f"env {e}: obs is not the previous step's next_obs; call end_all_episodes() "
                    "before resetting the envs"
                )
            row = self._write_row(e, obs[e, ..., -1], OBS)
            self._action[e, row % self.rows_per_env] = action[e]
            self._reward[e, row % self.rows_per_env] = reward[e]
            self._terminated[e, row % self.rows_per_env] = bool(terminated[e])
            if self._episode_obs_rows[e] >= self.n_step:
                self._mark_valid(e, row - self.n_step)
            self._episode_obs_rows[e] += 1
            self._last_obs[e] = next_obs[e]
            if done[e]:
                self._end_episode(e)
        self._apply_updates()

    def end_all_episodes(self) -> None:
        """Every running episode was cut: each ends as a truncation (bootstraps from next_obs)."""
        for e in np.flatnonzero(self._in_episode):
            self._end_episode(int(e))
        self._apply_updates()

    def _end_episode(self, e: int) -> None:
        final = self._write_row(e, self._last_obs[e, ..., -1], FINAL)
        for j in range(1, min(self.n_step, int(self._episode_obs_rows[e])) + 1):
            self._mark_valid(e, final - j)
        self._in_episode[e] = False

    def _write_row(self, e: int, frame: np.ndarray, kind: int) -> int:
        """Writes one row of env copy e; returns its absolute row number."""
        row = int(self._written[e])
        slot = row % self.rows_per_env
        self._frames[e, slot] = frame
        self._kind[e, slot] = kind
        self._terminated[e, slot] = False
        self._reward[e, slot] = 0.0
        self._written[e] += 1
        # The row overwritten here, and the K-1 after it (their stacks read it), are gone.
        for k in range(self.stack):
            self._updates.append((e, (slot + k) % self.rows_per_env, 0.0))
        return row

    def _mark_valid(self, e: int, row: int) -> None:
        value = self._priorities.max_priority if self.prioritized else 1.0
        self._updates.append((e, row % self.rows_per_env, value))

    def _apply_updates(self) -> None:
        if not self._updates:
            return
        updates = np.array(self._updates, dtype=np.float64)
        self._updates = []
        env, slot = updates[:, 0].astype(np.int64), updates[:, 1].astype(np.int64)
        values = updates[:, 2]
        self._valid[env, slot] = values > 0  # numpy fancy assignment: the last write wins
        self._priorities.tree.update(env * self.rows_per_env + slot, values)

    # ---------------------------------------------------------------------- sampling
    def drawable_indices(self) -> np.ndarray:
        """The `indices` (as `sample` returns them) of every transition that can be drawn now:
        what `update_priorities` accepts."""
        return np.flatnonzero(self._valid.reshape(-1))

    def sample(self, batch_size: int, num_batches: int = 1, beta: float = 0.4) -> Batch:
        """Each field [num_batches, batch_size, ...] with weights and indices, as `Replay`'s."""
        total = self._priorities.tree.total
        if total <= 0:
            raise ValueError("no complete transition to sample yet; add more steps first")
        shape = (int(num_batches), int(batch_size))
        count = shape[0] * shape[1]
        if self.prioritized:  # stratified, then shuffled across the K batches (as PER does)
            prefix = (np.arange(count) + self._rng.random(count)) * (total / count)
            prefix = prefix[self._rng.permutation(count)]
        else:
            prefix = self._rng.random(count) * total
        leaf = self._priorities.tree.find(prefix)
        env, slot = np.divmod(leaf, self.rows_per_env)
        rows_ahead = (slot[:, None] + np.arange(1, self.n_step + 1)) % self.rows_per_env
        is_final = self._kind[env[:, None], rows_ahead] == FINAL
        # m = steps to the episode's final row, or n if it lies further ahead.
        m = np.where(is_final.any(1), is_final.argmax(1) + 1, self.n_step)
        window = (slot[:, None] + np.arange(self.n_step)) % self.rows_per_env
        rewards = np.where(
            np.arange(self.n_step) < m[:, None], self._reward[env[:, None], window], 0.0
        )
        last = (slot + m - 1) % self.rows_per_env
        discount = np.where(self._terminated[env, last], 0.0, self._powers[m])
        if self.prioritized:
            priorities = self._priorities.tree.get(leaf).reshape(shape)
            weights = (priorities / priorities.min(axis=1, keepdims=True)) ** (-beta)
        else:
            weights = np.ones(shape)
        return {
            "obs": self._stacks(env, slot, shape),
            "action": self._action[env, slot].reshape(*shape, *self._action.shape[2:]),
            "reward": (rewards @ self._powers[: self.n_step]).astype(np.float32).reshape(shape),
            "next_obs": self._stacks(env, (slot + m) % self.rows_per_env, shape),
            "discount": discount.astype(np.float32).reshape(shape),
            "weights": weights.astype(np.float32),
            "indices": leaf.reshape(shape),
        }

    def _stacks(self, env: np.ndarray, slot: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
        """[*shape, H, W, K] stacks of the K rows ending at each (env, slot)."""
        rows = (slot[:, None] + np.arange(1 - self.stack, 1)) % self.rows_per_env
        frames = self._frames[env[:, None], rows]  # [N, K, H, W]
        return np.moveaxis(frames, 1, -1).reshape(*shape, *self.frame_shape, self.stack)

    def update_priorities(
        self,
        indices: np.ndarray,
        priorities: np.ndarray,
        alpha: float | None = None,
        epsilon: float | None = None,
    ) -> None:
        """Prioritized: rows' priorities (|TD error| + epsilon)^alpha, with `alpha`, `epsilon`
        from now on (None keeps the current one). Uniform: nothing to do."""
        if not self.prioritized:
            return
        indices = np.asarray(indices, np.int64).reshape(-1)
        priorities = np.asarray(priorities, np.float64).reshape(-1)
        if indices.shape != priorities.shape:
            raise ValueError(f"{indices.size} indices but {priorities.size} priorities")
        env, slot = np.divmod(indices, self.rows_per_env)
        if not self._valid[env, slot].all():
            raise ValueError("update_priorities got rows that cannot be sampled")
        self._priorities.update_priorities(indices, priorities, self.capacity, alpha, epsilon)

    # ---------------------------------------------------------------------- checkpoints
    def _config(self) -> dict:
        return {
            "rows_per_env": self.rows_per_env,
            "num_envs": self.num_envs,
            "frame_shape": list(self.frame_shape),
            "stack": self.stack,
            "n_step": self.n_step,
            "gamma": self.gamma,
            "prioritized": self.prioritized,
        }

    def state_dict(self) -> dict[str, np.ndarray]:
        """Plain arrays (no pickle); only the rows written so far."""
        filled = int(min(self._written.max(), self.rows_per_env))
        return {
            "config": np.array(json.dumps(self._config(), sort_keys=True)),
            # The exponent and floor the stored priorities were last made with (schedules).
            "alpha": np.array(self._priorities.alpha, np.float64),
            "epsilon": np.array(self._priorities.epsilon, np.float64),
            "frames": self._frames[:, :filled],
            "action": self._action[:, :filled],
            "reward": self._reward[:, :filled],
            "terminated": self._terminated[:, :filled],
            "kind": self._kind[:, :filled],
            "priorities": self._priorities.tree.get(np.arange(self.capacity)),
            "written": self._written.copy(),
            "in_episode": self._in_episode.copy(),
            "episode_obs_rows": self._episode_obs_rows.copy(),
            "last_obs": self._last_obs.copy(),
            "max_priority": np.array(self._priorities.max_priority),
            "rng_state": np.array(json.dumps(self._rng.bit_generator.state)),
        }

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        config = json.loads(str(state["config"]))
        if config != self._config():
            raise ValueError(f"checkpoint frame replay is {config}, this one {self._config()}")
        filled = int(np.asarray(state["frames"]).shape[1])
        for name in ("frames", "action", "reward", "terminated", "kind"):
            ours = getattr(self, "_" + name)
            saved = np.asarray(state[name])
            if saved.shape != (self.num_envs, filled, *ours.shape[2:]) or saved.dtype != ours.dtype:
                raise ValueError(f"checkpoint frame replay {name!r} is {saved.dtype}{saved.shape}")
            ours[:, :filled] = saved
            ours[:, filled:] = 0
        for name in ("written", "in_episode", "episode_obs_rows", "last_obs"):
            getattr(self, "_" + name)[...] = state[name]
        self._priorities.load_state_dict(state, self.capacity)
        priorities = np.asarray(state["priorities"])
        self._valid = (priorities > 0).reshape(self.num_envs, self.rows_per_env)
        self._rng.bit_generator.state = json.loads(str(state["rng_state"]))
