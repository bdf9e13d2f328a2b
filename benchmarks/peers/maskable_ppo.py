"""sb3-contrib's MaskablePPO on the masked tasks of docs/masking.md, beside our sets: LegalMoves-v0
(`ppo_legal_moves`) and gymnasium's Taxi-v4 (`ppo_taxi`).

    .venv-peers/bin/python -m benchmarks.peers.maskable_ppo --seed 0
    .venv-peers/bin/python -m benchmarks.peers.maskable_ppo --env Taxi-v4 --seed 0

Trains `sb3_contrib.MaskablePPO` for the set's env-step budget, evaluates on its schedule and
protocol, and appends one record to benchmarks/results/masking_beside_maskable_ppo.jsonl, in the
shape of benchmarks/results/masking_and_observations.jsonl's records (`python -m
benchmarks.masking_page` reads both sides).

LegalMoves-v0 is rl/envs/legal_moves.py itself, imported without TensorFlow (benchmarks/peers/
rl_envs.py); the module registers `LegalMoves-v0` with gymnasium.
The mask is the one the env gives, the `action_mask` key of each Dict observation: `LastMask`
keeps it (and renames the other key, which SB3 cannot take as it is) and
`sb3_contrib.common.wrappers.ActionMasker` hands it to MaskablePPO. The policy
(`MultiInputPolicy`) reads the whole Dict observation, mask included, as ours does.

Matched to `ppo_legal_moves` (rl/hparams/legal_moves.py, on `ppo` and `on_policy`):
  8 envs x 64 steps per rollout (n_envs, n_steps), batch_size 128, n_epochs 10, ent_coef 0,
  lr 3e-4 constant, gamma 0.99, gae_lambda 0.95, clip_range 0.2, no value clipping
  (clip_range_vf None), vf_coef 0.5, max_grad_norm 0.5, Adam epsilon 1e-5, advantages
  normalized per minibatch, no target_kl, separate 64-64 tanh torsos for policy and value, no
  observation or reward normalization, 50,000 env steps. All of these are SB3's defaults too,
  except n_envs, n_steps, batch_size and the budget, which are set here.
SB3's defaults with no counterpart or a different one: orthogonal initialization (gain sqrt 2,
  0.01 on the policy head, 1 on the value head; ours: Glorot kernels, orthogonal heads 0.01 and
  1), the PyTorch Adam (ours: Keras').
Not SB3's default: one torch thread (`--threads`, as benchmarks/peers/sb3_cell.py): on the
  2-core machine shared with other work, torch's default of 2 threads took 18 times the wall time
  for these small networks (2,048 steps: 30 s against 1.6 s).
Taxi-v4: the same, but lr 1e-3 annealed linearly to 0 over the run and ent_coef 0.01
  (`ppo_taxi`), 200,000 env steps, evaluations every 20,000; the policy is `MlpPolicy` on the
  one-hot `Discrete(500)` state (SB3 one-hots a Discrete observation, as ours does), the mask
  Taxi's own `action_mask(state)`, the one it puts in `info`.
Evaluation, as ours: every 10,000 env steps (at the first rollout end at or past each multiple,
  and at the end), 20 episodes, deterministic (the argmax of the masked policy), masks on, as
  rl-zoo3 evaluates off Atari (sb3_contrib's `evaluate_policy`, one eval env, seeded from the
  seed and the step). SB3 collects whole rollouts, so its last evaluation is at 50,176 steps
  (98 x 512) where ours stops at 50,000.

The record's `cpu_seconds` and `process_wall_seconds` are this whole process's (imports
included, as the recorder measures ours'); `wall_seconds` is the training loop with its
evaluations, as ours' progress.csv counts it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.evaluation import evaluate_policy
from sb3_contrib.common.wrappers import ActionMasker
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.monitor import Monitor

from benchmarks import machine_info
from benchmarks.peers.rl_envs import register_env
from benchmarks.peers.sb3_cell import versions

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "masking_beside_maskable_ppo.jsonl"
EVAL_EPISODES = 20
EVAL_SEED_OFFSET = 10_000  # evaluation env seeds: seed + 10,000 + the step (never a train seed)
LEGAL_MOVES_HYPERPARAMETERS = {
    "n_envs": 8, "n_steps": 64, "batch_size": 128, "n_epochs": 10, "learning_rate": 3e-4,
    "gamma": 0.99, "gae_lambda": 0.95, "clip_range": 0.2, "clip_range_vf": None,
    "normalize_advantage": True, "ent_coef": 0.0, "vf_coef": 0.5, "max_grad_norm": 0.5,
    "target_kl": None,
    "policy_kwargs": {"net_arch": {"pi": [64, 64], "vf": [64, 64]}, "activation_fn": "tanh",
                      "optimizer_kwargs": {"eps": 1e-5}},
}  # fmt: skip
# "lin_1e-3": rl-zoo3's notation for 1e-3 annealed linearly to 0 over the run, as `ppo_taxi`'s lr
TAXI_HYPERPARAMETERS = {
    **LEGAL_MOVES_HYPERPARAMETERS,
    "learning_rate": "lin_1e-3",
    "ent_coef": 0.01,
}
PACKAGES = ("torch", "stable-baselines3", "sb3-contrib", "gymnasium", "numpy")


class LastMask(gym.Wrapper):
    """Keeps the `action_mask` of the latest observation, for `ActionMasker` to read, and renames
    the `values` key `action_values`: SB3's CombinedExtractor keeps a torch ModuleDict by key, and
    `values` is one of ModuleDict's methods ("attribute 'values' already exists")."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        spaces = dict(env.observation_space.spaces)
        self.observation_space = gym.spaces.Dict(
            {"action_values": spaces["values"], "action_mask": spaces["action_mask"]}
        )

    def _seen(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        self.mask = np.asarray(obs["action_mask"], dtype=bool)
        return {"action_values": obs["values"], "action_mask": obs["action_mask"]}

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._seen(obs), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._seen(obs), reward, terminated, truncated, info


def last_mask(env: LastMask) -> np.ndarray:
    """ActionMasker's mask function: the mask of the observation the agent is acting on."""
    return env.mask


def taxi_mask(env: gym.Env) -> np.ndarray:
    """ActionMasker's mask function: Taxi's legal actions in its current state."""
    return env.unwrapped.action_mask(env.unwrapped.s).astype(bool)


def make_legal_moves() -> gym.Env:
    """LegalMoves-v0 with its 20-step limit, episodes recorded, the mask handed to MaskablePPO."""
    return ActionMasker(LastMask(Monitor(gym.make("LegalMoves-v0"))), last_mask)


def make_taxi() -> gym.Env:
    """Taxi-v4 with its 200-step limit, episodes recorded, the mask handed to MaskablePPO."""
    return ActionMasker(Monitor(gym.make("Taxi-v4")), taxi_mask)


@dataclass(frozen=True)
class Task:
    """A masked task as our set trains it: budget, evaluation schedule, the matched settings."""

    budget: int
    eval_every: int
    hyperparameters: dict[str, Any]
    policy: str
    make_env: Callable[[], gym.Env]


TASKS = {
    "LegalMoves-v0": Task(50_000, 10_000, LEGAL_MOVES_HYPERPARAMETERS, "MultiInputPolicy",
                          make_legal_moves),
    "Taxi-v4": Task(200_000, 20_000, TAXI_HYPERPARAMETERS, "MlpPolicy", make_taxi),
}  # fmt: skip
DEFAULT_ENV = "LegalMoves-v0"


def evaluate(model: MaskablePPO, eval_env: Any, seed: int) -> list[float]:
    eval_env.seed(seed + EVAL_SEED_OFFSET + int(model.num_timesteps))
    returns, _ = evaluate_policy(
        model,
        eval_env,
        n_eval_episodes=EVAL_EPISODES,
        deterministic=True,
        return_episode_rewards=True,
        use_masking=True,
    )
    return [float(r) for r in returns]


def process_wall_seconds() -> float:
    """Seconds since this process started (/proc/self/stat's start time against uptime)."""
    stat = Path("/proc/self/stat").read_text()
    started = int(stat[stat.rindex(")") + 2 :].split()[19]) / os.sysconf("SC_CLK_TCK")
    return float(Path("/proc/uptime").read_text().split()[0]) - started


def run(env_id: str, seed: int, budget: int, threads: int) -> dict[str, Any]:
    task = TASKS[env_id]
    torch.set_num_threads(threads)
    register_env(env_id)
    hp = dict(task.hyperparameters)
    n_envs = hp.pop("n_envs")
    policy_kwargs = dict(hp.pop("policy_kwargs"), activation_fn=torch.nn.Tanh)
    if str(hp["learning_rate"]).startswith("lin_"):  # progress_remaining runs 1 -> 0
        initial = float(hp["learning_rate"][len("lin_") :])
        hp["learning_rate"] = lambda progress_remaining: initial * progress_remaining
    start = time.monotonic()
    env = make_vec_env(task.make_env, n_envs=n_envs, seed=seed)
    eval_env = make_vec_env(task.make_env, n_envs=1)
    model = MaskablePPO(
        task.policy, env, seed=seed, device="cpu", policy_kwargs=policy_kwargs, **hp
    )
    curve = []
    while model.num_timesteps < budget:
        target = min(budget, (model.num_timesteps // task.eval_every + 1) * task.eval_every)
        model.learn(target - model.num_timesteps, reset_num_timesteps=False)
        returns = evaluate(model, eval_env, seed)
        curve.append([int(model.num_timesteps), round(float(np.mean(returns)), 4)])
        print(json.dumps({"step": curve[-1][0], "eval_mean": curve[-1][1]}), file=sys.stderr)
    wall = time.monotonic() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = machine_info.cpu()
    return {
        "side": "sb3-contrib",
        "command": [".venv-peers/bin/python", "-m", "benchmarks.peers.maskable_ppo",
                    "--seed", str(seed)] + (["--env", env_id] if env_id != DEFAULT_ENV else [])
                   + (["--budget", str(budget)] if budget != task.budget else [])
                   + (["--threads", str(threads)] if threads != 1 else []),
        "hparams_set": None,
        "algorithm": "sb3_contrib.MaskablePPO",
        "seed": seed,
        "env": env_id,
        "hyperparameters": task.hyperparameters,
        "overrides": {},
        "hparams_changes": {},
        "git": machine_info.git_state(),
        "cpu": {"count": os.cpu_count(), **{k: cpu[k] for k in ("machine", "model")}},
        "packages": versions(PACKAGES),
        "torch_threads": torch.get_num_threads(),
        "evaluation_protocol": {
            "episodes": EVAL_EPISODES,
            "every_steps": task.eval_every,
            "deterministic": True,
            "use_masking": True,
            "eval_envs": 1,
        },
        "eval_curve": curve,
        "final_return": curve[-1][1],
        "env_steps": int(model.num_timesteps),
        "wall_seconds": round(wall, 2),
        "process_wall_seconds": round(process_wall_seconds(), 2),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
        "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", choices=sorted(TASKS), default=DEFAULT_ENV)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, help="env steps (default: the task's)")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--results", type=Path, default=RESULTS, help="the JSONL file to append")
    args = parser.parse_args(argv)
    record = run(args.env, args.seed, args.budget or TASKS[args.env].budget, args.threads)
    with args.results.open("a") as f:
        f.write(json.dumps(record) + "\n")
    print(f"appended {args.env} seed {args.seed} to {args.results}: final {record['final_return']}")


if __name__ == "__main__":
    main()
