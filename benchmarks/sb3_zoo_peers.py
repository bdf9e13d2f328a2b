#!/usr/bin/env python
"""Stable-Baselines3 peer runs of the algorithm table: benchmarks/peers/sb3_solve.py with A2C and
DDPG, the table's evaluation protocol and two more zoo keys.

Runs in the peers venv (SB3 + PyTorch, no TensorFlow; benchmarks/peers/setup.sh makes it):

    V=.venv-peers/bin/python
    $V -m benchmarks.sb3_zoo_peers --algo a2c --env Acrobot-v1 --seed 0 --budget 500000 \
        --horizon zoo
    $V -m benchmarks.sb3_zoo_peers --print_zoo ppo Acrobot-v1     # the entry, as JSON
    $V -m benchmarks.sb3_zoo_peers --algo sac --env HalfCheetah-v5 --budget 300000 \
        --horizon zoo --no_stop                                    # no early stop

It loads sb3_solve.py as a module, adds to its `ALGOS` and `EVAL` tables and calls its `main()`,
so the training loop, the periodic greedy evaluation with early stop, the timing and the one
JSON line it prints are exactly sb3_solve's. Hyperparameters are the installed rl-zoo3's (read by
sb3_solve.py from its files). The eval protocol of every env comes from
benchmarks/algorithm_rows.py (`PROTOCOL`), the one place it is defined for both sides of the
comparison. Two zoo keys sb3_solve.py does not interpret are handled here the way
rl_zoo3/exp_manager.py does:
  normalize: true        -> VecNormalize(norm_obs, norm_reward, gamma=the entry's gamma) around
                            the training env; the eval env is a VecNormalize that shares the
                            training env's observation statistics (training=False, raw rewards),
                            as the zoo's eval callback syncs them. evaluate_policy reads the
                            Monitor's true episode returns.
  noise_type: 'ornstein-uhlenbeck' -> OrnsteinUhlenbeckActionNoise(sigma=noise_std), SB3's
                            default theta 0.15, dt 0.01; 'normal' -> NormalActionNoise.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SB3_SOLVE = HERE / "peers" / "sb3_solve.py"


def load_sb3_solve():
    spec = importlib.util.spec_from_file_location("sb3_solve", SB3_SOLVE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sb3_solve = load_sb3_solve()


def extend() -> None:
    """Adds the A2C/DDPG classes, the shared eval protocol and the two keys below to sb3_solve."""
    from stable_baselines3 import A2C, DDPG

    from benchmarks.algorithm_rows import PROTOCOL  # stdlib-only at import time

    sb3_solve.ALGOS.update({"a2c": A2C, "ddpg": DDPG})
    for env_id, protocol in PROTOCOL.items():
        sb3_solve.EVAL[env_id] = dict(protocol)
    sb3_solve.build = build
    sb3_solve.make_vec_env = make_vec_env


# --- the two zoo keys sb3_solve.py does not interpret (module docstring) -----------------------
_original_build = sb3_solve.build
_original_make_vec_env = sb3_solve.make_vec_env
_normalized = {"gamma": None, "train_env": None}


def build(algo, env_id, seed, budget, horizon):
    import gymnasium as gym
    import numpy as np
    from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise

    key = (algo, env_id)
    entry = sb3_solve.ZOO[key]
    patched = dict(entry)
    _normalized.update(gamma=None, train_env=None)
    if patched.pop("normalize", False):
        _normalized["gamma"] = patched.get("gamma", 0.99)
    if "noise_type" in patched:
        noise = {"ornstein-uhlenbeck": OrnsteinUhlenbeckActionNoise, "normal": NormalActionNoise}
        kind = noise[patched.pop("noise_type")]
        std = patched.pop("noise_std")
        n_act = gym.make(env_id).action_space.shape[0]
        patched["action_noise"] = kind(mean=np.zeros(n_act), sigma=std * np.ones(n_act))
    sb3_solve.ZOO[key] = patched
    try:
        return _original_build(algo, env_id, seed, budget, horizon)
    finally:
        sb3_solve.ZOO[key] = entry


def make_vec_env(env_id, **kwargs):
    from stable_baselines3.common.vec_env import VecNormalize

    env = _original_make_vec_env(env_id, **kwargs)
    if _normalized["gamma"] is None:
        return env
    if _normalized["train_env"] is None:  # sb3_solve builds the training env first
        env = VecNormalize(env, gamma=_normalized["gamma"])
        _normalized["train_env"] = env
        return env
    eval_env = VecNormalize(env, training=False, norm_reward=False)
    eval_env.obs_rms = _normalized["train_env"].obs_rms  # updated in place as training runs
    return eval_env


def train_to_budget() -> None:
    """`--no_stop`: evaluate on the same protocol but train on to the budget, recording the first
    evaluation at the threshold (the fixed-budget rows of algorithm_table.py)."""

    class EvalToBudget(sb3_solve.EvalStop):
        def _on_step(self):
            first = (self.solved, self.solve_step, self.solve_wall)
            super()._on_step()
            if first[0]:
                self.solved, self.solve_step, self.solve_wall = first
            return True

    sb3_solve.EvalStop = EvalToBudget


def main() -> None:
    extend()
    if "--no_stop" in sys.argv:
        sys.argv.remove("--no_stop")
        train_to_budget()
    if len(sys.argv) == 4 and sys.argv[1] == "--print_zoo":
        entry = sb3_solve.ZOO[(sys.argv[2], sys.argv[3])]
        print(json.dumps(entry, sort_keys=True, default=repr))
        return
    sb3_solve.main()


if __name__ == "__main__":
    main()
