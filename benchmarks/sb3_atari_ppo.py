#!/usr/bin/env python
"""Stable-Baselines3 PPO on Atari with rl-baselines3-zoo's settings: the peer side of
benchmarks/atari.py (a budget, then full games scored raw) and of the throughput figure for
`ppo_breakout` in benchmarks/atari_throughput.py (`--steps`).

Runs in the peers venv (SB3 + PyTorch + ale-py, no TensorFlow; benchmarks/peers/setup.sh):

    V=.venv-peers/bin/python
    $V benchmarks/sb3_atari_ppo.py --env ALE/Breakout-v5 --steps 4096         # throughput
    $V benchmarks/sb3_atari_ppo.py --budget 500000 --eval_games 10           # benchmarks/atari.py

The zoo's hyperparams/ppo.yml `atari` entry: 8 envs x 128 steps, 4 epochs of 256-sample
batches, lr and clip range linear from 2.5e-4 and 0.1 to 0 over the budget, ent_coef 0.01,
vf_coef 0.5, CnnPolicy, SB3's AtariWrapper (30 no-ops, frame skip 4 with max pooling, 84x84
grayscale, episodic life, FIRE on reset, clipped rewards) and 4 stacked frames. The ALE env has
sticky actions at 0.25 and frameskip=1, as ours.

`--budget`: trains that many agent steps (one `learn` call, so the zoo's linear schedules run
from their start value to 0 over the budget), then plays `--eval_games` full games with the
protocol of our PPO Atari sets (rl/hparams/atari.py) and rl-zoo3's: actions sampled from the
policy (`deterministic=False`), sticky actions 0.25, episodic life and FIRE reset as in
training, games capped at v5's 108,000 frames; the score is the raw full-game reward sum that
SB3's Monitor (below the AtariWrapper) reports. Prints one JSON line either way.
"""

from __future__ import annotations

import argparse
import json
import time

import ale_py
import gymnasium as gym
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_atari_env
from stable_baselines3.common.vec_env import VecFrameStack


def linear(start: float):
    return lambda progress: progress * start


def make_env(env_id: str, n_envs: int, seed: int):
    env = make_atari_env(
        env_id,
        n_envs=n_envs,
        seed=seed,
        env_kwargs={"frameskip": 1, "repeat_action_probability": 0.25},
    )
    return VecFrameStack(env, n_stack=4)


def make_model(env, seed: int) -> PPO:
    return PPO(
        "CnnPolicy",
        env,
        n_steps=128,
        n_epochs=4,
        batch_size=256,
        learning_rate=linear(2.5e-4),
        clip_range=linear(0.1),
        vf_coef=0.5,
        ent_coef=0.01,
        seed=seed,
        verbose=0,
    )


class RolloutClock(BaseCallback):
    """(env steps, wall time) at the end of each rollout: the steady rate leaves the first
    rollout (start-up) out, as benchmarks/atari.py does for ours. Also the training curve:
    the mean raw score of the full games that ended in each `window` of agent steps (Monitor's
    info["episode"], below the AtariWrapper), as ours logs train/raw_score_mean."""

    def __init__(self, window: int = 10_240) -> None:
        super().__init__()
        self.marks: list[tuple[int, float]] = []
        self.window = window
        self.curve: list[tuple[int, float, int]] = []  # (steps, mean raw score, games)
        self._games: list[float] = []
        self._next = window

    def _on_step(self) -> bool:
        self._games += [float(i["episode"]["r"]) for i in self.locals["infos"] if "episode" in i]
        if self.num_timesteps >= self._next:
            if self._games:
                mean = sum(self._games) / len(self._games)
                self.curve.append((self.num_timesteps, round(mean, 2), len(self._games)))
            self._games = []
            self._next += self.window
        return True

    def _on_rollout_end(self) -> None:
        self.marks.append((self.num_timesteps, time.perf_counter()))


def play_full_games(model: PPO, env_id: str, games: int, seed: int) -> list[float]:
    """Raw scores of `games` full games, one per env copy (Monitor's info["episode"])."""
    env = make_env(env_id, games, seed)
    obs = env.reset()
    scores: list[float | None] = [None] * games
    while any(s is None for s in scores):
        action, _ = model.predict(obs, deterministic=False)  # ppo_breakout's sample_actions
        obs, _, _, infos = env.step(action)
        for i, info in enumerate(infos):
            if scores[i] is None and "episode" in info:  # game over (not a lost life)
                scores[i] = float(info["episode"]["r"])
    env.close()
    return [float(s) for s in scores]


def throughput(args: argparse.Namespace) -> dict:
    model = make_model(make_env(args.env, 8, args.seed), args.seed)
    model.learn(total_timesteps=1024)  # warm-up: one iteration
    start = time.perf_counter()
    model.learn(total_timesteps=args.steps, reset_num_timesteps=False)
    seconds = time.perf_counter() - start
    return {
        "env": args.env,
        "env_steps": args.steps,
        "seconds": round(seconds, 2),
        "steps_per_second": round(args.steps / seconds, 1),
    }


def budget_run(args: argparse.Namespace) -> dict:
    start = time.perf_counter()
    model = make_model(make_env(args.env, 8, args.seed), args.seed)
    clock = RolloutClock()
    model.learn(total_timesteps=args.budget, callback=clock)
    train_seconds = time.perf_counter() - start
    eval_start = time.perf_counter()
    scores = play_full_games(model, args.env, args.eval_games, args.seed + 1000)
    eval_seconds = time.perf_counter() - eval_start
    (steps0, t0), (steps1, t1) = clock.marks[0], clock.marks[-1]
    return {
        "env": args.env,
        "agent_steps": int(model.num_timesteps),
        "train_seconds": round(train_seconds, 2),
        "steady_steps_per_second": round((steps1 - steps0) / (t1 - t0), 1) if t1 > t0 else None,
        "eval_seconds": round(eval_seconds, 2),
        "eval_scores": scores,
        "curve": clock.curve,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="ALE/Breakout-v5")
    parser.add_argument("--steps", type=int, default=4096, help="timed env steps after warm-up")
    parser.add_argument("--budget", type=int, help="agent steps to train, then full games")
    parser.add_argument("--eval_games", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    gym.register_envs(ale_py)
    out = budget_run(args) if args.budget else throughput(args)
    out["torch_threads"] = torch.get_num_threads()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
