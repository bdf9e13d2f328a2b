"""Seeds split over CPU cores: K seed groups stepped concurrently, one thread each.

Why: XLA runs these small CPU programs on one core, so S seeds in one program cost about S times
one seed's iteration. One program per core, called from one thread each, can use every core
(TensorFlow releases the GIL while an XLA executable runs). It costs a compilation per shard and
pays only when cores are free (on the loaded dev machine it was slower:
benchmarks/compiled_seeds.py), so it is opt-in. Sharding changes wall time, not numbers.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import numpy as np
import tensorflow as tf

from rl.hparams import HParams


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def shard_count(hparams: HParams, num_seeds: int) -> int:
    """How many concurrent programs `num_seeds` seeds are split into (at most one per seed):
    `hparams.seed_shards`, or where that is 0 one per usable core on a CPU-only host, else one."""
    wanted = int(hparams.seed_shards)
    if wanted <= 0:
        accelerated = any(tf.config.list_physical_devices(kind) for kind in ("GPU", "TPU"))
        wanted = 1 if accelerated else usable_cores()
    return max(1, min(wanted, num_seeds))


def split_evenly(items: Sequence[Any], parts: int) -> list[list[Any]]:
    """`items` in order, cut into `parts` consecutive runs whose sizes differ by at most one."""
    size, extra = divmod(len(items), parts)
    bounds = [k * size + min(k, extra) for k in range(parts + 1)]
    return [list(items[start:stop]) for start, stop in itertools.pairwise(bounds)]


class ShardedSeeds:
    """A `SeedGroup` made of `shards` (each a `SeedGroup`), run concurrently from one thread
    per shard; members, metrics and evaluations are in shard order, so in seed order."""

    def __init__(self, shards: list[Any]) -> None:
        if not shards:
            raise ValueError("ShardedSeeds needs at least one shard")
        self.shards = shards
        self.members = [member for shard in shards for member in shard.members]
        self.steps_per_iteration = shards[0].steps_per_iteration
        self._sizes = [len(shard.members) for shard in shards]
        self._pool = ThreadPoolExecutor(len(shards), thread_name_prefix="seed-shard")

    def _each(self, call: Callable[[Any, Any], Any], args: Sequence[Any] | None = None) -> list:
        """`call(shard, arg)` for every shard at once; results in shard order. A shard's
        exception is raised here (after the others finished), so nothing is left running."""
        args = [None] * len(self.shards) if args is None else args
        futures = [self._pool.submit(call, s, a) for s, a in zip(self.shards, args, strict=True)]
        wait(futures)
        return [future.result() for future in futures]

    def run_iteration(self) -> list[dict[str, float]]:
        per_shard = self._each(lambda shard, _: shard.run_iteration())
        return [out for outs in per_shard for out in outs]

    def evaluate(self, seeds: list[int], num_envs: int) -> list[tuple[np.ndarray, np.ndarray]]:
        bounds = itertools.accumulate(self._sizes, initial=0)
        parts = [seeds[start:stop] for start, stop in itertools.pairwise(bounds)]
        per_shard = self._each(lambda shard, part: shard.evaluate(part, num_envs), parts)
        return [result for results in per_shard for result in results]

    def store_to_members(self) -> None:
        for shard in self.shards:
            shard.store_to_members()

    def load_from_members(self) -> None:
        for shard in self.shards:
            shard.load_from_members()

    def close(self) -> None:
        self._pool.shutdown(wait=True)
