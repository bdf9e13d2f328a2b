#!/usr/bin/env python3
"""Bytes written and seconds per checkpoint of a full replay: whole-buffer vs chunked writes.

Two replays, filled to capacity with synthetic data through their real classes:
  frames    the Atari FrameReplay (84x84 frames stored once, 8 env copies, prioritized)
  cartpole  a prioritized replay of CartPole transitions (obs/next_obs float32[4], ...)
Then, for each:
  before    the whole numpy state in one numpy.npz (the layout before chunked arrays; written
            here with np.savez streaming to the file, so without the two in-memory copies the
            old writer made: a lower bound of its cost)
  after     `CheckpointStore.save` (rl/utils/checkpoint.py): the first save writes every chunk,
            each later one only the chunks the --add transitions since the previous one changed
            (plus the priorities, which change everywhere); median over --saves saves.

    .venv/bin/python -m benchmarks.checkpoint_io                       # 1M transitions each
    .venv/bin/python -m benchmarks.checkpoint_io --transitions 100000  # a quick look
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmarks import tool_records  # noqa: E402
from benchmarks.frame_replay import stream  # noqa: E402
from rl.memory.frame_replay import FrameReplay  # noqa: E402
from rl.memory.prioritized import PrioritizedReplay  # noqa: E402
from rl.types import VectorStep
from rl.utils.checkpoint import CheckpointStore  # noqa: E402

NUM_ENVS = 8


class FrameSource:
    def __init__(self, capacity: int) -> None:
        self.replay = FrameReplay(
            capacity, (84, 84, 4), (), np.int64, NUM_ENVS, 3, 0.99, seed=0, prioritized=True
        )
        self.steps = stream(NUM_ENVS, 800, np.random.default_rng(0))
        self.false = np.zeros(NUM_ENVS, bool)

    def add(self, transitions: int) -> None:
        for _ in range(transitions // NUM_ENVS):
            obs, action, reward, next_obs, ended = next(self.steps)
            self.replay.add(VectorStep(obs, action, reward, next_obs, ended, self.false))


class CartPoleSource:
    FIELDS = {
        "obs": ((4,), np.float32),
        "action": ((), np.int64),
        "reward": ((), np.float32),
        "next_obs": ((4,), np.float32),
        "discount": ((), np.float32),
    }

    def __init__(self, capacity: int) -> None:
        self.replay = PrioritizedReplay(capacity, self.FIELDS, seed=0)
        self.rng = np.random.default_rng(0)

    def add(self, transitions: int) -> None:
        for start in range(0, transitions, 10_000):
            n = min(10_000, transitions - start)
            batch = {
                name: self.rng.standard_normal((n, *shape)).astype(dtype)
                for name, (shape, dtype) in self.FIELDS.items()
            }
            indices = self.replay.add_batch(batch)
            self.replay.update_priorities(indices, self.rng.random(n))


def numpy_state(source) -> dict[str, np.ndarray]:
    return {f"replay/{k}": v for k, v in source.replay.state_dict().items()}


def measure(name: str, source, args, directory: Path) -> list[tuple]:
    print(f"[{name}] filling {args.transitions:,} transitions ...", flush=True)
    source.add(args.transitions)
    state = numpy_state(source)
    total = sum(np.asarray(v).nbytes for v in state.values())
    rows = []
    path = directory / f"{name}_before.npz"
    start = time.perf_counter()
    with open(path, "wb") as f:
        np.savez(f, **state)
    before_seconds = time.perf_counter() - start
    rows.append((name, "before", total, path.stat().st_size, before_seconds))
    path.unlink()

    store = CheckpointStore(str(directory / name), keep=2)
    weights = tf.train.Checkpoint(v=tf.Variable(np.zeros(1000, np.float32)))
    start = time.perf_counter()
    store.save(0, weights, state, {})
    rows.append((name, "after, first", total, store.last_save_bytes, time.perf_counter() - start))
    sizes, seconds = [], []
    for i in range(1, args.saves + 1):
        source.add(args.add)
        state = numpy_state(source)
        start = time.perf_counter()
        store.save(i * args.add, weights, state, {})
        seconds.append(time.perf_counter() - start)
        sizes.append(store.last_save_bytes)
    rows.append((name, "after, next", total, statistics.median(sizes), statistics.median(seconds)))
    shutil.rmtree(directory / name)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transitions", type=int, default=1_000_000)
    parser.add_argument("--add", type=int, default=10_000, help="transitions between saves")
    parser.add_argument("--saves", type=int, default=3)
    parser.add_argument("--dir", help="where to write (default: a temporary directory)")
    parser.add_argument("--only", choices=["frames", "cartpole"])
    args = parser.parse_args()
    directory = Path(args.dir or tempfile.mkdtemp(prefix="checkpoint_io_"))
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    sources = {"cartpole": CartPoleSource, "frames": FrameSource}
    for name, make in sources.items():
        if args.only in (None, name):
            rows += measure(name, make(args.transitions), args, directory)
    print(
        f"\n{args.transitions:,} transitions per replay; {args.add:,} added between saves "
        f"(median of {args.saves})"
    )
    print(f"{'replay':<10} {'checkpoint':<14} {'replay MB':>10} {'written MB':>11} {'seconds':>8}")
    for name, kind, total, written, seconds in rows:
        print(f"{name:<10} {kind:<14} {total / 1e6:>10.1f} {written / 1e6:>11.1f} {seconds:>8.2f}")
    keys = ("replay", "checkpoint", "replay_bytes", "written_bytes", "seconds")
    rows = [dict(zip(keys, row, strict=True)) for row in rows]
    tool_records.append("checkpoint_io", {**vars(args), "dir": str(directory)}, rows)


if __name__ == "__main__":
    main()
