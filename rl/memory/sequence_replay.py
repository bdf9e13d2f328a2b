"""Sequence replay with burn-in for recurrent value learners (DRQN, R2D2-style).

Kapturowski et al. 2019, "Recurrent Experience Replay in Distributed Reinforcement Learning"
(R2D2), https://openreview.net/forum?id=r1lyTjAqYX. How an episode is cut into items:
docs/recurrent.md, "DRQN".

Item fields (T = burn_in + sequence_length):
    obs [T + 1, ...]  the steps' observations, then the true next observation of the last
                      step (its `final_obs` if the episode ended there), then zero padding;
    action, reward [T];  discount [T]: gamma, or 0 where the episode terminated;
    mask [T]: 1 on the steps to learn from (after the burn-in, before the padding);
    burn_in []: how many leading steps are burn-in (0 at an episode's start);
    state [S]: the recurrent state the actor had before the item's first step.

Unfinished windows are checkpointed too (`builder/...`), so a resumed run emits the same items.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rl.memory.array_state import load_arrays, under_prefix, with_prefix
from rl.memory.prioritized import PrioritizedSampler
from rl.memory.ring_storage import RingStorage
from rl.memory.uniform import Replay, UniformSampler
from rl.registry import register_memory
from rl.types import Batch, VectorStep

BUILDER_PREFIX = "builder/"


class SequenceBuilder:
    """Turns each env's stream of steps into burn-in + window items (docs/recurrent.md, "DRQN")."""

    def __init__(
        self,
        num_envs: int,
        sequence_length: int,
        burn_in: int,
        obs_shape: tuple[int, ...],
        obs_dtype: np.dtype,
        state_size: int,
        gamma: float,
    ) -> None:
        if sequence_length < 1 or burn_in < 0:
            raise ValueError(
                f"sequence_length must be >= 1 and burn_in >= 0, got {sequence_length}, {burn_in}"
            )
        self.num_envs, self.length, self.burn_in = int(num_envs), int(sequence_length), burn_in
        self.gamma = float(gamma)
        size = self.item_steps = self.burn_in + self.length  # T
        n = self.num_envs
        # Pending steps of every env: burn-in prefix + the window being filled.
        self._arrays = {
            "obs": np.zeros((n, size, *obs_shape), np.dtype(obs_dtype)),
            "action": np.zeros((n, size), np.int64),
            "reward": np.zeros((n, size), np.float32),
            "terminated": np.zeros((n, size), bool),
            "state": np.zeros((n, size, int(state_size)), np.float32),
            "count": np.zeros(n, np.int64),  # pending steps
            "burn": np.zeros(n, np.int64),  # of which the leading burn-in
            # The true next observation of every env's latest step: a cut's bootstrap obs.
            "last_next_obs": np.zeros((n, *obs_shape), np.dtype(obs_dtype)),
        }

    def fields(self) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
        a, size = self._arrays, self.item_steps
        return {
            "obs": ((size + 1, *a["obs"].shape[2:]), a["obs"].dtype),
            "action": ((size,), np.dtype(np.int64)),
            "reward": ((size,), np.dtype(np.float32)),
            "discount": ((size,), np.dtype(np.float32)),
            "mask": ((size,), np.dtype(np.float32)),
            "burn_in": ((), np.dtype(np.int32)),
            "state": ((a["state"].shape[2],), np.dtype(np.float32)),
        }

    def add(self, step: VectorStep, state: np.ndarray) -> Batch:
        """Takes one vector-env step (`state`: the recurrent state each env acted from, [N, S];
        `next_obs`: the true next observation) and returns the items it completed."""
        obs, action, reward, next_obs, terminated, truncated = step
        a, envs = self._arrays, np.arange(self.num_envs)
        count = a["count"]
        a["obs"][envs, count] = obs
        a["action"][envs, count] = action
        a["reward"][envs, count] = reward
        a["terminated"][envs, count] = terminated
        a["state"][envs, count] = state
        count += 1
        ended = np.asarray(terminated, bool) | np.asarray(truncated, bool)
        full = count == a["burn"] + self.length
        return self._emit(np.flatnonzero(ended | full), next_obs, ended)

    def flush(self) -> Batch:
        """Ends every env's episode as a truncation (a cut): returns the windows' items."""
        a = self._arrays
        envs = np.flatnonzero(a["count"] > a["burn"])
        return self._emit(envs, a["last_next_obs"].copy(), np.ones(self.num_envs, bool))

    def _emit(self, envs: np.ndarray, next_obs: np.ndarray, ended: np.ndarray) -> Batch:
        a = self._arrays
        a["last_next_obs"][...] = next_obs
        items = {
            name: np.zeros((len(envs), *shape), dtype)
            for name, (shape, dtype) in self.fields().items()
        }
        for row, e in enumerate(envs):
            count, burn = int(a["count"][e]), int(a["burn"][e])
            items["obs"][row, :count] = a["obs"][e, :count]
            items["obs"][row, count] = next_obs[e]
            items["action"][row, :count] = a["action"][e, :count]
            items["reward"][row, :count] = a["reward"][e, :count]
            items["discount"][row, :count] = self.gamma * (1.0 - a["terminated"][e, :count])
            items["mask"][row, burn:count] = 1.0
            items["burn_in"][row] = burn
            items["state"][row] = a["state"][e, 0]
            if ended[e]:
                a["count"][e] = a["burn"][e] = 0
            else:  # the window's last steps become the next item's burn-in
                keep = min(self.burn_in, count)
                for name in ("obs", "action", "reward", "terminated", "state"):
                    a[name][e, :keep] = a[name][e, count - keep : count].copy()
                a["count"][e] = a["burn"][e] = keep
        return items

    def state_dict(self) -> dict[str, np.ndarray]:
        return {name: array.copy() for name, array in self._arrays.items()}

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        load_arrays(self._arrays, state, "sequence builder")


@register_memory("sequence")
class SequenceReplay(Replay):
    """Replay of burn-in + window sequences (R2D2): a `SequenceBuilder` turns the per-env stream
    into the items, sampled uniformly or prioritized."""

    def __init__(
        self,
        capacity: int,
        num_envs: int,
        sequence_length: int,
        burn_in: int,
        obs_shape: tuple[int, ...],
        obs_dtype: np.dtype,
        state_size: int,
        gamma: float,
        seed: int,
        prioritized: bool = False,
        alpha: float = 0.6,
        epsilon: float = 1e-6,
    ) -> None:
        self.builder = SequenceBuilder(
            num_envs, sequence_length, burn_in, obs_shape, obs_dtype, state_size, gamma
        )
        sampler = PrioritizedSampler(capacity, alpha, epsilon) if prioritized else UniformSampler()
        super().__init__(RingStorage(capacity, self.builder.fields()), sampler, seed)
        self.prioritized = prioritized

    def add(self, step: VectorStep, state: np.ndarray) -> None:
        """One vector-env step (as `SequenceBuilder.add`); completed items are stored."""
        self._store(self.builder.add(step, state))

    def end_all_episodes(self) -> None:
        """The trainer cut every episode: the unfinished windows become (truncated) items."""
        self._store(self.builder.flush())

    def _store(self, items: Batch) -> None:
        if len(items["burn_in"]):
            self.add_batch(items)

    def state_dict(self) -> dict[str, np.ndarray]:
        return {**super().state_dict(), **with_prefix(BUILDER_PREFIX, self.builder.state_dict())}

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        super().load_state_dict(state)  # reads only its own keys
        self.builder.load_state_dict(under_prefix(BUILDER_PREFIX, state))
