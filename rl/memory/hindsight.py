"""Hindsight experience replay (HER; Andrychowicz et al. 2017, https://arxiv.org/abs/1707.01495).

In a goal-conditioned task a missed goal teaches nothing, unless the transition is replayed as
if the goal had been what the agent did reach. This memory keeps whole episodes per env copy and,
at sampling time, gives a fraction `1 - 1 / (n_sampled_goal + 1)` of every batch a new desired goal:
an achieved goal of the same episode, chosen by `strategy` (as Stable-Baselines3's
`HerReplayBuffer` does, so the two can be compared):

- "future":  one reached later in the episode than the transition (the paper's best),
- "final":   the one reached at the episode's end,
- "episode": one reached anywhere in the episode.

The reward of a relabelled transition comes from the env's own `compute_reward`, over the whole
batch in one call; `terminated` stays as stored (SB3 does the same). Only transitions of finished
episodes are drawn, since "future" needs the rest of the episode. The goals are read from and
written to the packed observation vector (rl/envs/packed_observation.py) at the slices the env's
layout gives for its `achieved_goal` and `desired_goal` keys.

Storage is SB3's layout, a ring of [steps, num_envs] rows: each env copy's episode lies in
consecutive rows, and when the ring overwrites the first row of an old episode, the rest of that
episode is withdrawn too. Everything, the generator included, is in the checkpoint, so a resumed run
draws the batches an uninterrupted one would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

import numpy as np
from numpy.typing import DTypeLike

from rl.memory.array_state import load_arrays
from rl.registry import register_memory
from rl.types import Batch, VectorStep

NAME = "her"  # memory=her
STRATEGIES = ("future", "final", "episode")
# (achieved goals [N, G], desired goals [N, G]) -> rewards [N]: the env's `compute_reward`.
RewardFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]
ROW_FIELDS = (
    "obs", "action", "reward", "next_obs", "terminated", "episode_start", "episode_length"
)  # fmt: skip


@register_memory(NAME)
class HindsightReplay:
    """Episodes per env copy; batches relabelled with achieved goals (`STRATEGIES`)."""

    def __init__(
        self,
        capacity: int,
        obs_shape: tuple[int, ...],
        obs_dtype: DTypeLike,
        action_shape: tuple[int, ...],
        action_dtype: DTypeLike,
        num_envs: int,
        achieved_goal: slice,
        desired_goal: slice,
        compute_reward: RewardFunction,
        strategy: str = "future",
        n_sampled_goal: int = 4,
        gamma: float = 0.99,
        seed: int = 0,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"HER strategy must be one of {STRATEGIES}, got {strategy!r}")
        if int(n_sampled_goal) < 0:
            raise ValueError(f"n_sampled_goal must be >= 0, got {n_sampled_goal}")
        if len(obs_shape) != 1:
            raise ValueError(f"HER needs flat (packed) observations, got shape {obs_shape}")
        self.num_envs = int(num_envs)
        self.steps = int(capacity) // self.num_envs
        if self.steps < 1:
            raise ValueError(f"HER capacity {capacity} is below one row per env copy ({num_envs})")
        self.achieved_goal, self.desired_goal = achieved_goal, desired_goal
        self.compute_reward = compute_reward
        self.strategy, self.n_sampled_goal = strategy, int(n_sampled_goal)
        self.gamma = float(gamma)
        rows = (self.steps, self.num_envs)
        self._rows = {
            "obs": np.zeros(rows + tuple(obs_shape), obs_dtype),
            "action": np.zeros(rows + tuple(action_shape), action_dtype),
            "reward": np.zeros(rows, np.float32),
            "next_obs": np.zeros(rows + tuple(obs_shape), obs_dtype),
            "terminated": np.zeros(rows, bool),
            "episode_start": np.zeros(rows, np.int64),  # the row of its episode's first step
            "episode_length": np.zeros(rows, np.int64),  # 0: episode running or withdrawn
        }
        self._running_start = np.zeros(self.num_envs, np.int64)
        self._running_length = np.zeros(self.num_envs, np.int64)
        self._next_row = 0
        self._full = False
        self._drawable = 0  # rows of finished episodes: what `sample` draws from
        self._rng = np.random.Generator(np.random.PCG64(seed))

    @property
    def capacity(self) -> int:
        return self.steps * self.num_envs

    def relabelled_per_batch(self, batch_size: int) -> int:
        """Items of a batch that get a new goal: SB3's `int(her_ratio * batch_size)`, where
        her_ratio = 1 - 1 / (n_sampled_goal + 1) (n_sampled_goal new goals per real one)."""
        return int((1.0 - 1.0 / (self.n_sampled_goal + 1)) * batch_size)

    def __len__(self) -> int:
        return self._drawable

    # ---------------------------------------------------------------------- adding
    def add(self, step: VectorStep) -> None:
        """One vector-env step ([num_envs, ...] each); `next_obs` is the true next observation
        (`final_obs` where an episode ended)."""
        obs, action, reward, next_obs, terminated, truncated = step
        row = self._next_row
        too_long = np.flatnonzero(self._running_length >= self.steps)
        if too_long.size:
            raise ValueError(
                f"an episode of env copy {int(too_long[0])} outgrew the HER replay's "
                f"{self.steps} rows per env copy; raise buffer_size to at least "
                f"{(self.steps + 1) * self.num_envs} or shorten the episodes"
            )
        if self._full:
            self._withdraw_episodes_at(row)
        values = {"obs": obs, "action": action, "reward": reward, "next_obs": next_obs}
        for name, value in values.items():
            self._rows[name][row] = value
        self._rows["terminated"][row] = terminated
        self._rows["episode_start"][row] = self._running_start
        self._rows["episode_length"][row] = 0
        self._running_length += 1
        self._next_row = (row + 1) % self.steps
        self._full = self._full or self._next_row == 0
        ended = np.asarray(terminated, bool) | np.asarray(truncated, bool)
        for e in np.flatnonzero(ended):
            self._finish_episode(int(e))

    def end_all_episodes(self) -> None:
        """Every running episode was cut (the envs are about to be reset): each is finished as it
        stands, and its transitions become drawable."""
        for e in np.flatnonzero(self._running_length):
            self._finish_episode(int(e))

    def _finish_episode(self, e: int) -> None:
        length = int(self._running_length[e])
        rows = (self._running_start[e] + np.arange(length)) % self.steps
        self._rows["episode_length"][rows, e] = length
        self._drawable += length
        self._running_start[e] = self._next_row
        self._running_length[e] = 0

    def _withdraw_episodes_at(self, row: int) -> None:
        """Before `row` is overwritten: the finished episodes it belongs to stop being drawable,
        every row of them (their "future" goals would be gone)."""
        for e in np.flatnonzero(self._rows["episode_length"][row]):
            length = int(self._rows["episode_length"][row, e])
            rows = (self._rows["episode_start"][row, e] + np.arange(length)) % self.steps
            self._rows["episode_length"][rows, e] = 0
            self._drawable -= length

    # ---------------------------------------------------------------------- sampling
    def sample(self, batch_size: int, num_batches: int = 1, beta: float = 0.4) -> Batch:
        """[num_batches, batch_size, ...] transitions of finished episodes, the first
        `relabelled_per_batch(batch_size)` of each batch with new goals; "weights" are ones
        (uniform sampling, `beta` unused) and "indices" the flat rows drawn."""
        del beta
        if self._drawable == 0:
            raise ValueError(
                "the HER replay has no finished episode yet; learning_starts must cover at "
                "least one whole episode per env copy"
            )
        filled = self.steps if self._full else self._next_row
        drawable = np.flatnonzero(self._rows["episode_length"][:filled].reshape(-1))
        shape = (int(num_batches), int(batch_size))
        flat = drawable[self._rng.integers(0, drawable.size, size=shape)]
        row, env = np.divmod(flat, self.num_envs)
        batch = {name: self._rows[name][row, env] for name in ("obs", "action", "reward")}
        batch["next_obs"] = self._rows["next_obs"][row, env]
        terminated = self._rows["terminated"][row, env]
        goal_rows = self._goal_rows(row, env)
        relabel = np.zeros(shape, bool)
        relabel[:, : self.relabelled_per_batch(shape[1])] = True
        if relabel.any():
            goals = self._rows["next_obs"][goal_rows[relabel], env[relabel]][:, self.achieved_goal]
            obs, next_obs = batch["obs"][relabel], batch["next_obs"][relabel]
            obs[:, self.desired_goal] = goals
            next_obs[:, self.desired_goal] = goals
            batch["obs"][relabel], batch["next_obs"][relabel] = obs, next_obs
            rewards = self.compute_reward(next_obs[:, self.achieved_goal], goals)
            batch["reward"][relabel] = np.asarray(rewards, np.float32).reshape(-1)
        batch["discount"] = np.where(terminated, 0.0, self.gamma).astype(np.float32)
        batch["weights"] = np.ones(shape, np.float32)
        batch["indices"] = flat
        return batch

    def _goal_rows(self, row: np.ndarray, env: np.ndarray) -> np.ndarray:
        """For each drawn row, the row whose achieved goal becomes its new goal (`strategy`)."""
        start = self._rows["episode_start"][row, env]
        length = self._rows["episode_length"][row, env]
        if self.strategy == "final":
            step = length - 1
        elif self.strategy == "future":
            step = self._rng.integers((row - start) % self.steps, length)
        else:
            step = self._rng.integers(0, length)
        return (start + step) % self.steps

    # ---------------------------------------------------------------------- checkpoints
    def _config(self) -> dict:
        return {
            "steps": self.steps,
            "num_envs": self.num_envs,
            "strategy": self.strategy,
            "n_sampled_goal": self.n_sampled_goal,
            "gamma": self.gamma,
            "goals": [self.achieved_goal.start, self.achieved_goal.stop]
            + [self.desired_goal.start, self.desired_goal.stop],
        }

    def state_dict(self) -> dict[str, np.ndarray]:
        """Plain arrays (no pickle): only the rows written so far, as views (save before the
        next add), so a growing replay changes only its checkpoint's tail."""
        filled = self.steps if self._full else self._next_row
        return {
            "config": np.array(json.dumps(self._config(), sort_keys=True)),
            **{f"rows/{name}": self._rows[name][:filled] for name in ROW_FIELDS},
            "running_start": self._running_start.copy(),
            "running_length": self._running_length.copy(),
            "next_row": np.array(self._next_row, np.int64),
            "full": np.array(self._full),
            "rng_state": np.array(json.dumps(self._rng.bit_generator.state)),
        }

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        config = json.loads(str(state["config"]))
        if config != self._config():
            raise ValueError(f"checkpoint HER replay is {config}, this one {self._config()}")
        filled = int(np.shape(state["rows/obs"])[0])
        load_arrays(
            {name: self._rows[name][:filled] for name in ROW_FIELDS},
            {name: state[f"rows/{name}"] for name in ROW_FIELDS},
            "HER replay rows",
        )
        for array in self._rows.values():
            array[filled:] = 0
        self._running_start[...] = state["running_start"]
        self._running_length[...] = state["running_length"]
        self._next_row = int(state["next_row"])
        self._full = bool(state["full"])
        self._drawable = int(np.count_nonzero(self._rows["episode_length"]))
        self._rng.bit_generator.state = json.loads(str(state["rng_state"]))
