#!/usr/bin/env python
"""Time-to-solve / throughput driver for Stable-Baselines3 reference runs.

Runs in the peers venv (.venv-peers, made by benchmarks/peers/setup.sh):

    .venv-peers/bin/python benchmarks/peers/sb3_solve.py --algo dqn --env CartPole-v1 \
        --budget 100000 --horizon zoo

benchmarks/solve.py, compiled_ppo.py, compiled_dqn.py and python_path_vs_sb3.py run it beside our
side; benchmarks/sb3_zoo_peers.py adds the pairs it lacks (the algorithm table's SB3 side).

Trains one (algo, env, seed) with the rl-baselines3-zoo hyperparameters for that
pair, evaluates on a separate eval env every N env steps (deterministic policy),
stops as soon as the eval mean reaches the threshold or the step budget is hit,
and prints ONE JSON line (also appended to --out if given).

Modes
  solve (default): periodic eval + early stop (see EVAL below).
  --throughput   : no eval at all, train for exactly --budget steps, report SPS.

Schedule horizon (--horizon)
  budget (default): learn(total_timesteps=budget), i.e. exactly what
      `python -m rl_zoo3.train --algo A --env E -n BUDGET` does: progress-based
      schedules (DQN exploration_fraction, PPO lin_ learning rate / clip range)
      are stretched over the budget.
  zoo: schedules keep the zoo's own n_timesteps horizon. DQN: exploration_fraction
      is rescaled so epsilon decays over the same absolute number of steps as in
      the zoo (then stays at exploration_final_eps, as SB3 does). PPO: lin_
      schedules reach 0 at the zoo n_timesteps, so the budget is capped there.

Wall clock: wall_seconds_* are measured from immediately before model.learn()
(the model/env construction time is reported separately as setup_seconds) and
INCLUDE the time spent in periodic evaluation; eval_seconds is reported so a
training-only figure can be derived (sps_train_only).
"""

import argparse
import json
import platform
import sys
import time

import gymnasium as gym
import numpy as np
import stable_baselines3
import torch
from stable_baselines3 import DQN, PPO, SAC, TD3
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.noise import NormalActionNoise
from stable_baselines3.common.vec_env import DummyVecEnv

from benchmarks.peers.zoo import read_entry

# Hyperparameters: the installed rl-zoo3's own files (benchmarks/peers/zoo.py reads them), the
# MuJoCo entries under their v4 ids. Keys that are not SB3 constructor kwargs (n_timesteps,
# n_envs, noise_type, noise_std, lin_ schedules, normalize) are interpreted here and in
# benchmarks/sb3_zoo_peers.py the way rl_zoo3/exp_manager.py does. Anything not listed = SB3
# default.


class ZooEntries(dict):
    """(algo, env id) -> the installed rl-zoo3's entry for them, read on first use."""

    def __missing__(self, key: tuple[str, str]) -> dict:
        algo, env_id = key
        zoo_key = env_id.replace("-v5", "-v4") if env_id.endswith("-v5") else None
        _, entry = read_entry(algo, env_id, zoo_key)
        entry["n_timesteps"] = int(entry["n_timesteps"])
        entry.setdefault("n_envs", 1)
        if isinstance(entry.get("policy_kwargs"), str):  # as rl-zoo3 reads it
            entry["policy_kwargs"] = eval(entry["policy_kwargs"], {"dict": dict, "nn": torch.nn})
        self[key] = entry
        return entry


ZOO = ZooEntries()

ALGOS = {"dqn": DQN, "ppo": PPO, "sac": SAC, "td3": TD3}

# Eval protocol requested for this benchmark (not from the zoo).
EVAL = {
    "CartPole-v1": dict(every=5_000, episodes=10, threshold=475.0),
    "Pendulum-v1": dict(every=2_000, episodes=5, threshold=-200.0),
}


def linear_schedule(initial_value, horizon_scale=1.0):
    """zoo's lin_X: value = progress_remaining * X.

    horizon_scale = budget / zoo_n_timesteps re-expresses SB3's progress
    (computed over the budget) on the zoo horizon, clamped at 0.
    """

    def func(progress_remaining):
        p = 1.0 - (1.0 - progress_remaining) * horizon_scale
        return max(p, 0.0) * initial_value

    return func


class EvalStop(BaseCallback):
    def __init__(self, eval_env, every, episodes, threshold, t_start_ref):
        super().__init__()
        self.eval_env = eval_env
        self.every = every
        self.episodes = episodes
        self.threshold = threshold
        self.next_eval = every
        self.t_start_ref = t_start_ref
        self.history = []
        self.eval_seconds = 0.0
        self.solved = False
        self.solve_step = None
        self.solve_wall = None

    def _on_step(self):
        if self.num_timesteps < self.next_eval:
            return True
        while self.next_eval <= self.num_timesteps:
            self.next_eval += self.every
        t0 = time.perf_counter()
        mean, std = evaluate_policy(
            self.model, self.eval_env, n_eval_episodes=self.episodes, deterministic=True
        )
        t1 = time.perf_counter()
        self.eval_seconds += t1 - t0
        wall = t1 - self.t_start_ref[0]
        self.history.append(
            dict(
                step=int(self.num_timesteps), mean=float(mean), std=float(std), wall=round(wall, 3)
            )
        )
        print(
            f"[eval] step={self.num_timesteps} mean={mean:.2f} +/- {std:.2f} wall={wall:.1f}s",
            file=sys.stderr,
            flush=True,
        )
        if mean >= self.threshold:
            self.solved = True
            self.solve_step = int(self.num_timesteps)
            self.solve_wall = wall
            return False
        return True


def build(algo, env_id, seed, budget, horizon):
    hp = dict(ZOO[(algo, env_id)])
    zoo_n = hp.pop("n_timesteps")
    n_envs = hp.pop("n_envs")
    policy = hp.pop("policy")
    notes = []
    horizon_scale = 1.0
    if horizon == "zoo":
        horizon_scale = budget / zoo_n
        if algo == "dqn":
            hp["exploration_fraction"] = hp["exploration_fraction"] * zoo_n / budget
            notes.append(
                f"exploration_fraction rescaled to {hp['exploration_fraction']:.4f} so eps "
                f"decays over {int(0.16 * zoo_n)} steps as in the zoo"
            )
    for k in ("learning_rate", "clip_range"):
        if isinstance(hp.get(k), str) and hp[k].startswith("lin_"):
            hp[k] = linear_schedule(float(hp[k][4:]), horizon_scale)
    env = make_vec_env(env_id, n_envs=n_envs, seed=seed, vec_env_cls=DummyVecEnv)
    if "noise_type" in hp:
        noise_type = hp.pop("noise_type")
        noise_std = hp.pop("noise_std")
        assert noise_type == "normal"
        n_act = env.action_space.shape[0]
        hp["action_noise"] = NormalActionNoise(
            mean=np.zeros(n_act), sigma=noise_std * np.ones(n_act)
        )
    model = ALGOS[algo](policy, env, seed=seed, device="cpu", verbose=0, **hp)
    return model, zoo_n, n_envs, notes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--algo", required=True, choices=sorted(ALGOS))
    ap.add_argument("--env", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=int, required=True, help="max env steps")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    ap.add_argument("--horizon", choices=["budget", "zoo"], default="budget")
    ap.add_argument("--throughput", action="store_true", help="no eval, fixed steps, report SPS")
    ap.add_argument("--out", default=None, help="append the JSON line to this file")
    ap.add_argument("--tag", default=None)
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    budget = a.budget
    if a.horizon == "zoo" and a.algo == "ppo":
        zn = ZOO[(a.algo, a.env)]["n_timesteps"]
        if budget > zn:
            print(
                f"[note] ppo lin_ schedules hit 0 at {zn}; budget capped {budget} -> {zn}",
                file=sys.stderr,
            )
            budget = zn

    t_setup0 = time.perf_counter()
    model, zoo_n, n_envs, notes = build(a.algo, a.env, a.seed, budget, a.horizon)
    setup_s = time.perf_counter() - t_setup0

    t_start_ref = [None]
    cb = None
    if not a.throughput:
        ev = EVAL[a.env]
        eval_env = make_vec_env(a.env, n_envs=1, seed=a.seed + 10_000, vec_env_cls=DummyVecEnv)
        cb = EvalStop(eval_env, ev["every"], ev["episodes"], ev["threshold"], t_start_ref)

    t_start_ref[0] = time.perf_counter()
    model.learn(total_timesteps=budget, callback=cb)
    wall = time.perf_counter() - t_start_ref[0]
    steps = int(model.num_timesteps)
    eval_s = cb.eval_seconds if cb else 0.0

    rec = dict(
        tag=a.tag,
        mode="throughput" if a.throughput else "solve",
        algo=a.algo,
        env=a.env,
        seed=a.seed,
        solved=(cb.solved if cb else None),
        env_steps_to_solve=(cb.solve_step if cb else None),
        wall_seconds_to_solve=(round(cb.solve_wall, 3) if cb and cb.solved else None),
        final_eval_mean=(cb.history[-1]["mean"] if cb and cb.history else None),
        env_steps_total=steps,
        wall_seconds_total=round(wall, 3),
        sps_overall=round(steps / wall, 1),
        eval_seconds=round(eval_s, 3),
        sps_train_only=round(steps / (wall - eval_s), 1),
        setup_seconds=round(setup_s, 3),
        budget=budget,
        horizon=a.horizon,
        zoo_n_timesteps=zoo_n,
        n_envs=n_envs,
        torch_threads=torch.get_num_threads(),
        torch_interop_threads=torch.get_num_interop_threads(),
        eval_protocol=(EVAL[a.env] if not a.throughput else None),
        eval_history=(cb.history if cb else None),
        notes=notes,
        versions=dict(
            python=platform.python_version(),
            torch=torch.__version__,
            sb3=stable_baselines3.__version__,
            gymnasium=gym.__version__,
            numpy=np.__version__,
        ),
        time_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    line = json.dumps(rec)
    print(line, flush=True)
    if a.out:
        with open(a.out, "a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
