#!/usr/bin/env python
"""Stable-Baselines3 PPO on Atari with rl-baselines3-zoo's settings: training throughput, the
peer figure for `ppo_breakout` in benchmarks/atari_throughput.py (issue 19).

Runs in the peers venv (SB3 + PyTorch, no TensorFlow) with ale-py installed into it:

    V=~/.cache/rl-peers-venv/bin/python
    $V -m pip install ale-py==0.12.1 opencv-python-headless
    $V benchmarks/sb3_atari_ppo.py --env ALE/Breakout-v5 --steps 4096

The zoo's hyperparams/ppo.yml `atari` entry: 8 envs x 128 steps, 4 epochs of 256-sample
batches, lr and clip range linear from 2.5e-4 and 0.1, ent_coef 0.01, vf_coef 0.5, CnnPolicy,
SB3's AtariWrapper (30 no-ops, frame skip 4 with max pooling, 84x84 grayscale, episodic life,
FIRE on reset, clipped rewards) and 4 stacked frames. The ALE env has sticky actions at 0.25
and frameskip=1, as ours. One warm-up iteration is left out of the rate; prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

import ale_py
import gymnasium as gym
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_atari_env
from stable_baselines3.common.vec_env import VecFrameStack


def linear(start: float):
    return lambda progress: progress * start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="ALE/Breakout-v5")
    parser.add_argument("--steps", type=int, default=4096, help="timed env steps after warm-up")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    gym.register_envs(ale_py)
    env = make_atari_env(
        args.env,
        n_envs=8,
        seed=args.seed,
        env_kwargs={"frameskip": 1, "repeat_action_probability": 0.25},
    )
    env = VecFrameStack(env, n_stack=4)
    model = PPO(
        "CnnPolicy",
        env,
        n_steps=128,
        n_epochs=4,
        batch_size=256,
        learning_rate=linear(2.5e-4),
        clip_range=linear(0.1),
        vf_coef=0.5,
        ent_coef=0.01,
        seed=args.seed,
        verbose=0,
    )
    model.learn(total_timesteps=1024)  # warm-up: one iteration
    start = time.perf_counter()
    model.learn(total_timesteps=args.steps, reset_num_timesteps=False)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "env": args.env,
                "env_steps": args.steps,
                "seconds": round(seconds, 2),
                "steps_per_second": round(args.steps / seconds, 1),
                "torch_threads": torch.get_num_threads(),
            }
        )
    )


if __name__ == "__main__":
    main()
