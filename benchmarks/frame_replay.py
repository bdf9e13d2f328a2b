#!/usr/bin/env python3
"""Memory and speed of the Atari frame replay against a plain replay of stacked observations.

Fills a FrameReplay of --capacity rows with synthetic 84x84x4 frame stacks (episodes of
--episode_length steps) and times, as medians over --repeats:
  add      one vector-env step (num_envs transitions)
  sample   K=1 batch of --batch_size transitions (stacks and n-step targets rebuilt)
next to a plain UniformReplay holding obs and next_obs stacks (its memory is computed from its
field sizes; allocating it at full capacity would need gigabytes).

    .venv/bin/python -m benchmarks.frame_replay --capacity 100000
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402

from benchmarks.timing import median_seconds  # noqa: E402
from rl.memory import NStepAccumulator, UniformReplay  # noqa: E402
from rl.memory.frame_replay import FrameReplay  # noqa: E402
from rl.types import VectorStep

SHAPE = (84, 84, 4)


def stream(num_envs: int, episode_length: int, rng: np.random.Generator):
    """Endless (obs, action, reward, next_obs, terminated, truncated) vector steps."""
    obs = np.repeat(rng.integers(0, 256, (num_envs, 84, 84, 1), dtype=np.uint8), 4, axis=-1)
    t = 0
    while True:
        t += 1
        frame = rng.integers(0, 256, (num_envs, 84, 84, 1), dtype=np.uint8)
        next_obs = np.concatenate([obs[..., 1:], frame], axis=-1)
        ended = np.full(num_envs, t % episode_length == 0)
        yield obs, np.zeros(num_envs, np.int64), np.ones(num_envs, np.float32), next_obs, ended
        obs = next_obs
        if ended[0]:
            obs = np.repeat(frame, 4, axis=-1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--capacity", type=int, default=100_000)
    parser.add_argument("--num_envs", type=int, default=1)
    parser.add_argument("--n_step", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--episode_length", type=int, default=800)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    steps = stream(args.num_envs, args.episode_length, rng)
    false = np.zeros(args.num_envs, bool)

    frame_replay = FrameReplay(
        args.capacity, SHAPE, (), np.int64, args.num_envs, args.n_step, 0.99, seed=0
    )
    fill = args.capacity // args.num_envs
    for _ in range(fill):
        obs, action, reward, next_obs, ended = next(steps)
        frame_replay.add(VectorStep(obs, action, reward, next_obs, ended, false))

    def add_frame():
        obs, action, reward, next_obs, ended = next(steps)
        frame_replay.add(VectorStep(obs, action, reward, next_obs, ended, false))

    frame_add = median_seconds(add_frame, args.repeats)
    frame_sample = median_seconds(lambda: frame_replay.sample(args.batch_size), args.repeats)

    # The plain replay at a capacity it can allocate, timed the same way (speed does not
    # depend on capacity; memory is scaled to --capacity from the per-row size).
    small = min(args.capacity, 10_000)
    fields = {
        "obs": (SHAPE, np.uint8),
        "action": ((), np.int64),
        "reward": ((), np.float32),
        "next_obs": (SHAPE, np.uint8),
        "discount": ((), np.float32),
    }
    plain = UniformReplay(small, fields, seed=0)
    n_step = NStepAccumulator(args.n_step, 0.99, args.num_envs, fields)
    for _ in range(small // args.num_envs):
        obs, action, reward, next_obs, ended = next(steps)
        out = n_step.add(VectorStep(obs, action, reward, next_obs, ended, false))
        if len(out["reward"]):
            plain.add_batch(out)

    def add_plain():
        obs, action, reward, next_obs, ended = next(steps)
        out = n_step.add(VectorStep(obs, action, reward, next_obs, ended, false))
        if len(out["reward"]):
            plain.add_batch(out)

    plain_add = median_seconds(add_plain, args.repeats)
    plain_sample = median_seconds(lambda: plain.sample(args.batch_size), args.repeats)
    plain_row = sum(int(np.prod(shape)) * np.dtype(dt).itemsize for shape, dt in fields.values())

    print(
        f"capacity {args.capacity:,} transitions, obs {SHAPE} uint8, n_step {args.n_step}, "
        f"batch {args.batch_size}, num_envs {args.num_envs}"
    )
    print(
        f"{'replay':<26} {'bytes/transition':>17} {'total':>10} "
        f"{'add (us)':>10} {'sample (us)':>12}"
    )
    rows = [
        ("frame replay (this)", frame_replay.nbytes / frame_replay.capacity,
         frame_replay.nbytes, frame_add, frame_sample),
        ("uniform obs+next_obs", plain_row, plain_row * args.capacity, plain_add, plain_sample),
    ]  # fmt: skip
    for name, per_row, total, add, sample in rows:
        print(
            f"{name:<26} {per_row:>17,.0f} {total / 2**30:>8.2f} GiB "
            f"{add * 1e6:>10.1f} {sample * 1e6:>12.1f}"
        )


if __name__ == "__main__":
    main()
