#!/usr/bin/env python3
"""Atari env stacks, random actions: ours (as `ppo_breakout` builds it) against gymnasium's
AsyncVectorEnv baseline and, where it imports, envpool: emulator frames/s.

    .venv/bin/python -m benchmarks.atari_env_stacks --steps 500 --repeats 5
    .venv-envpool/bin/python -m benchmarks.atari_env_stacks    # + envpool

(.venv-envpool: envpool beside our pins, made as benchmarks/envpool_atari.py says.)

Stacks, all 8 copies of ALE/Breakout-v5 with sticky actions 0.25, frame skip 4 (max over the
last two frames), 84x84 grayscale, 4 stacked frames, 30 no-ops:

  ours, in process     make_vector_env(ppo_breakout's env, num_envs, env_kwargs): gymnasium's
                       SyncVectorEnv over rl/envs/atari.py's stack (plus episodic life, FIRE
                       reset, reward clipping, the raw game score), what train.py steps;
  ours, 2 workers      the same copies in 2 worker processes (--num_workers 2);
  gymnasium async      gymnasium.vector.AsyncVectorEnv, one process per copy, of
                       AtariPreprocessing + FrameStackObservation: the baseline most gymnasium
                       code uses (no episodic life, FIRE reset or clipping);
  envpool              envpool.make("Breakout-v5", env_type="gymnasium") with the same
                       options (episodic life, reward clipping, FIRE reset), its C++ thread pool.

Each repeat steps every stack in turn (interleaved, so load from other processes on the shared
machine hits all alike); the table gives the median over repeats. Random actions come from one
seeded generator, the same sequence for every stack.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parents[1]

from rl import registry  # noqa: E402
from rl.envs import make_vector_env  # noqa: E402

GAME = "ALE/Breakout-v5"


def gymnasium_copy() -> gym.Env:
    import ale_py

    gym.register_envs(ale_py)
    env = gym.make(GAME, frameskip=1, repeat_action_probability=0.25)
    env = gym.wrappers.AtariPreprocessing(env, noop_max=30, frame_skip=4, screen_size=84)
    return gym.wrappers.FrameStackObservation(env, 4)


def stacks(num_envs: int, env_kwargs: dict) -> dict[str, Callable[[], object]]:
    """Stack name -> constructor of a reset-ready vector env."""
    out: dict[str, Callable[[], object]] = {
        "ours, in process (SyncVectorEnv)": lambda: make_vector_env(
            GAME, num_envs, 0, env_kwargs=env_kwargs
        )[0],
        "ours, --num_workers 2": lambda: make_vector_env(
            GAME, num_envs, 0, env_kwargs=env_kwargs, num_workers=2
        )[0],
        "gymnasium AsyncVectorEnv": lambda: gym.vector.AsyncVectorEnv([gymnasium_copy] * num_envs),
    }
    try:
        import envpool
    except ImportError:
        return out

    def make_envpool():
        return envpool.make(
            "Breakout-v5",
            env_type="gymnasium",
            num_envs=num_envs,
            seed=0,
            repeat_action_probability=env_kwargs["repeat_action_probability"],
            noop_max=env_kwargs["noop_max"],
            frame_skip=env_kwargs["frame_skip"],
            stack_num=env_kwargs["frame_stack"],
            episodic_life=env_kwargs["terminal_on_life_loss"],
            reward_clip=env_kwargs["clip_rewards"],
            use_fire_reset=env_kwargs["fire_reset"],
        )

    out[f"envpool {envpool.__version__}"] = make_envpool
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500, help="vector steps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    hp = registry.get_hparams("ppo_breakout")()
    num_envs, frame_skip = hp.num_envs, hp.env_kwargs["frame_skip"]
    built = {}
    for name, make in stacks(num_envs, hp.env_kwargs).items():
        env = make()
        # envpool fixes its seeds in envpool.make (a reset seed only draws a warning there).
        if name.startswith("envpool"):
            env.reset()
        else:
            env.reset(seed=0)
        built[name] = env
    actions = np.random.default_rng(0).integers(4, size=(args.steps, num_envs))
    samples: dict[str, list[float]] = {name: [] for name in built}
    for _ in range(args.repeats):
        for name, env in built.items():
            start = time.perf_counter()
            for action in actions:
                env.step(action)
            seconds = time.perf_counter() - start
            samples[name].append(args.steps * num_envs * frame_skip / seconds)
    for env in built.values():
        env.close()
    print(
        f"\n{GAME}, {num_envs} copies, random actions, {args.steps} vector steps x "
        f"{args.repeats} repeats (median; min-max), {os.cpu_count()} CPUs"
    )
    print(f"| {'stack':<34} | {'frames/s':>9} | {'range':>15} |")
    print(f"|{'-' * 36}|{'-' * 11}|{'-' * 17}|")
    for name, rates in samples.items():
        spread = f"{min(rates):,.0f}-{max(rates):,.0f}"
        print(f"| {name:<34} | {statistics.median(rates):>9,.0f} | {spread:>15} |")


if __name__ == "__main__":
    main()
