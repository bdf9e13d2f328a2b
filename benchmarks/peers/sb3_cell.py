"""One SB3 cell of a campaign: an rl-zoo3 entry trained for a budget, evaluated on a schedule, and
resumable after a kill to the same bits as a run never stopped.

    .venv-peers/bin/python -m benchmarks.peers.sb3_cell --algo td3 --env Hopper-v5 \
        --zoo-key Hopper-v4 --seed 0 --budget 300000 --dir DIR

`python -m benchmarks.campaign run` starts it; run again with the same arguments, it continues from
the newest checkpoint in DIR. How it stays exact: training is `model.learn()` in chunks that end at
every evaluation step (a multiple of --eval-every), with `reset_num_timesteps=False`, in the
uninterrupted run as in a resumed one, so both make the same calls. Schedules (learning rate, clip
range, DQN's exploration) keep the whole budget as their horizon (rl-zoo3's `-n BUDGET`), not a
chunk's (or the zoo entry's own n_timesteps with `--horizon zoo`, as a budget that differs from the
zoo's would otherwise stretch DQN's exploration or a linear learning rate; past the horizon a
schedule stays at its end value). With `--stop-at R`, training ends at the first evaluation whose
mean reaches R. A checkpoint, at every multiple of --checkpoint-every, holds the model (weights,
optimizer, counters, the last observation, action noise), the replay buffer, the training VecEnv
with its running episodes (env_state.py; or, for envs that cannot be saved so, a reset with a seed
fixed by the step, done at every checkpoint of both runs), the global torch, numpy and Python
generators, the action space's generator, and the evaluations so far. Each evaluation seeds the
zoo's evaluation env from the step, so it depends on the policy alone. When done, it writes
DIR/result.json (written last: its presence means the cell is complete).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import pickle
import platform
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.vec_env import VecEnv, VecNormalize, sync_envs_normalization

from benchmarks.peers import env_state, zoo
from benchmarks.peers.rl_envs import register_env

EVAL_SEED_OFFSET = 10_000  # evaluation env seeds: seed + 10,000 + the step (never a train seed)
PACKAGES = ("torch", "stable-baselines3", "sb3-contrib", "rl-zoo3", "gymnasium", "numpy",
            "mujoco", "gymnasium-robotics", "ale-py", "box2d")  # fmt: skip


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--algo", required=True)
    p.add_argument("--env", required=True)
    p.add_argument("--zoo-key", default=None, help="the zoo entry to read (default: as rl-zoo3)")
    p.add_argument("--hyperparams", default="{}", help="JSON overrides of the zoo entry")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=int, required=True, help="env steps")
    p.add_argument("--eval-every", type=int, default=10_000)
    p.add_argument("--eval-episodes", type=int, default=10)
    p.add_argument("--checkpoint-every", type=int, default=50_000, help="a multiple of eval-every")
    p.add_argument("--horizon", default=None, help="schedules' span: N, or zoo")
    p.add_argument("--stop-at", type=float, default=None, help="end at an evaluation mean >= this")
    p.add_argument("--env-state", choices=("auto", "pickle", "cut"), default="auto")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--dir", type=Path, required=True)
    args = p.parse_args(argv)
    if args.checkpoint_every % args.eval_every:
        p.error("--checkpoint-every must be a multiple of --eval-every")
    return args


def horizon_fixed(model: BaseAlgorithm, horizon: int) -> None:
    """Schedules see progress over `horizon` env steps, whatever chunk `learn()` was given; past
    it they stay at their end value (rl-zoo3's linear schedules would turn negative)."""
    method = type(model)._update_current_progress_remaining
    model._update_current_progress_remaining = lambda steps, _total: method(
        model, min(steps, horizon), horizon
    )


def save_checkpoint(
    folder: Path, model: BaseAlgorithm, env: VecEnv, mode: str, state: dict[str, Any]
) -> None:
    """Everything the module docstring lists, in a new folder, then `latest.json` names it."""
    step = int(model.num_timesteps)
    tmp = folder / f"ckpt-{step}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save(tmp / "model.zip", exclude=["_update_current_progress_remaining"])
    if isinstance(model, OffPolicyAlgorithm):
        model.save_replay_buffer(tmp / "replay_buffer.pkl")
    if mode == "pickle":
        (tmp / "env.pkl").write_bytes(env_state.dumps(env))
    elif isinstance(env, VecNormalize):  # cut: only the statistics (pickled without the envs)
        (tmp / "vecnormalize.pkl").write_bytes(pickle.dumps(env))
    generators = {
        "torch": torch.get_rng_state(),
        "numpy": np.random.get_state(),
        "python": random.getstate(),
        "action_space": model.action_space.np_random.bit_generator.state,
    }
    (tmp / "generators.pkl").write_bytes(pickle.dumps(generators))
    (tmp / "state.json").write_text(json.dumps(state))
    final = folder / f"ckpt-{step}"
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    pointer = folder / "latest.json"
    (folder / "latest.json.tmp").write_text(json.dumps({"directory": final.name, "step": step}))
    os.replace(folder / "latest.json.tmp", pointer)
    for old in folder.glob("ckpt-*"):
        if old.name != final.name:
            shutil.rmtree(old, ignore_errors=True)


def cut_episodes(model: BaseAlgorithm, env: VecEnv, seed: int) -> None:
    """`cut` mode at a checkpoint step: every env starts a new episode from a seed fixed by the
    step, so a resumed run can put a fresh env in the same state."""
    env.seed(seed + int(model.num_timesteps))
    model._last_obs = env.reset()
    model._last_episode_starts = np.ones((env.num_envs,), dtype=bool)
    if isinstance(env, VecNormalize):
        model._last_original_obs = env.get_original_obs()


def restore(
    folder: Path, built: zoo.ZooBuild, mode: str, seed: int
) -> tuple[BaseAlgorithm, VecEnv, dict[str, Any]] | None:
    """The model, training env and cell state of the newest checkpoint, or None."""
    try:
        pointer = json.loads((folder / "latest.json").read_text())
    except FileNotFoundError:
        return None
    ckpt = folder / pointer["directory"]
    state = json.loads((ckpt / "state.json").read_text())
    built.model.get_env().close()
    if mode == "pickle":
        env = env_state.loads((ckpt / "env.pkl").read_bytes())
    else:
        env = built.make_train_env()
        env.seed(seed + pointer["step"])
        env.reset()
        if isinstance(env, VecNormalize):
            saved = pickle.loads((ckpt / "vecnormalize.pkl").read_bytes())
            env.obs_rms, env.ret_rms = saved.obs_rms, saved.ret_rms  # returns: 0 after reset
    algo = type(built.model)
    model = algo.load(ckpt / "model.zip", env=env, device="cpu", force_reset=False)
    if isinstance(model, OffPolicyAlgorithm):
        model.load_replay_buffer(ckpt / "replay_buffer.pkl")
    generators = pickle.loads((ckpt / "generators.pkl").read_bytes())
    torch.set_rng_state(generators["torch"])
    np.random.set_state(generators["numpy"])
    random.setstate(generators["python"])
    model.action_space.np_random.bit_generator.state = generators["action_space"]
    return model, env, state


def evaluate(model: BaseAlgorithm, eval_env: VecEnv, args: argparse.Namespace, det: bool) -> dict:
    """The zoo's evaluation (its env, normalization synced, its greedy-or-not choice), seeded by
    the step."""
    if isinstance(model.get_env(), VecNormalize):
        sync_envs_normalization(model.get_env(), eval_env)
    eval_env.seed(args.seed + EVAL_SEED_OFFSET + int(model.num_timesteps))
    start = time.perf_counter()
    successes: list[float] = []

    def record_success(step_locals: dict[str, Any], _: dict[str, Any]) -> None:
        """A goal env's final `is_success`, as SB3's EvalCallback reads it."""
        if step_locals["done"] and "is_success" in step_locals["info"]:
            successes.append(float(step_locals["info"]["is_success"]))

    returns, lengths = evaluate_policy(
        model,
        eval_env,
        n_eval_episodes=args.eval_episodes,
        deterministic=det,
        return_episode_rewards=True,
        callback=record_success,
    )
    result = {
        "step": int(model.num_timesteps),
        "mean": float(np.mean(returns)),
        "std": float(np.std(returns)),
        "returns": [float(r) for r in returns],
        "lengths": [int(n) for n in lengths],
        "eval_seconds": round(time.perf_counter() - start, 3),
    }
    if successes:
        result["success_rate"] = float(np.mean(successes))
    return result


def reached(evals: list[dict[str, Any]], stop_at: float | None) -> bool:
    return stop_at is not None and bool(evals) and evals[-1]["mean"] >= stop_at


def versions(packages: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Python's version and each installed package's (a missing one is left out)."""
    found = {"python": platform.python_version()}
    for name in packages:
        try:
            found[name] = md.version(name)
        except md.PackageNotFoundError:
            pass
    return found


def run(args: argparse.Namespace) -> dict[str, Any]:
    torch.set_num_threads(args.threads)
    args.dir.mkdir(parents=True, exist_ok=True)
    folder = args.dir / "checkpoints"
    overrides = json.loads(args.hyperparams)
    register_env(args.env)
    built = zoo.build(
        args.algo, args.env, args.seed, args.budget, args.dir, args.zoo_key, overrides
    )
    mode, why = args.env_state, "asked for"
    if mode == "auto":
        faithful, why = env_state.pickles_faithfully(built.make_train_env)
        mode = "pickle" if faithful else "cut"
    state: dict[str, Any] = {"evals": [], "train_seconds": 0.0, "resumed_at": []}
    model, env = built.model, built.model.get_env()
    restored = restore(folder, built, mode, args.seed)
    if restored is not None:
        model, env, state = restored
        state["resumed_at"].append(int(model.num_timesteps))
    if args.horizon is None:
        horizon = args.budget
    else:
        horizon = built.source["entry"]["n_timesteps"] if args.horizon == "zoo" else args.horizon
    horizon_fixed(model, int(float(horizon)))
    eval_env = built.make_eval_env()
    while model.num_timesteps < args.budget and not reached(state["evals"], args.stop_at):
        before = int(model.num_timesteps)
        target = min(args.budget, (before // args.eval_every + 1) * args.eval_every)
        start = time.perf_counter()
        model.learn(target - before, reset_num_timesteps=False)
        state["train_seconds"] += time.perf_counter() - start
        state["evals"].append(evaluate(model, eval_env, args, built.deterministic_eval))
        last = state["evals"][-1]
        print(json.dumps({"step": last["step"], "eval_mean": last["mean"]}), file=sys.stderr)
        steps = int(model.num_timesteps)
        if reached(state["evals"], args.stop_at):
            break
        if steps < args.budget and steps // args.checkpoint_every > before // args.checkpoint_every:
            if mode == "cut":
                cut_episodes(model, env, args.seed)
            save_checkpoint(folder, model, env, mode, state)
    return {
        "algo": args.algo,
        "env": args.env,
        "seed": args.seed,
        "budget": args.budget,
        "horizon": int(float(horizon)),
        "stop_at": args.stop_at,
        "env_steps": int(model.num_timesteps),
        "evals": state["evals"],
        "final_eval_mean": state["evals"][-1]["mean"] if state["evals"] else None,
        "train_seconds": round(state["train_seconds"], 3),
        "resumed_at": state["resumed_at"],
        "env_state": {"mode": mode, "why": why},
        "deterministic_eval": built.deterministic_eval,
        "zoo": built.source,
        "torch_threads": torch.get_num_threads(),
        "versions": versions(),
    }


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if (args.dir / "result.json").exists():  # finished before its runner could record it
        print(f"{args.dir / 'result.json'} exists: the cell is complete", file=sys.stderr)
        return
    result = run(args)
    tmp = args.dir / "result.json.tmp"
    tmp.write_text(json.dumps(result, default=repr))
    os.replace(tmp, args.dir / "result.json")


if __name__ == "__main__":
    main()
