#!/usr/bin/env python
"""Stable-Baselines3 peer runs for the (algo, env) pairs benchmarks/peers/sb3_solve.py lacks.

Runs in the peers venv (SB3 + PyTorch, no TensorFlow; benchmarks/peers/setup.sh makes it):

    V=.venv-peers/bin/python
    $V benchmarks/sb3_zoo_peers.py --algo a2c --env Acrobot-v1 --seed 0 --budget 500000 \
        --horizon zoo
    $V benchmarks/sb3_zoo_peers.py --print_zoo ppo Acrobot-v1     # the entry, as JSON
    $V benchmarks/sb3_zoo_peers.py --algo sac --env HalfCheetah-v5 --budget 300000 \
        --horizon zoo --no_stop                                    # no early stop

It imports sb3_solve.py as a module (that file stays unchanged), adds to its `ZOO`,
`ALGOS` and `EVAL` tables, and calls its `main()`, so the training loop, the periodic greedy
evaluation with early stop, the timing and the one JSON line it prints are exactly sb3_solve's.
The eval protocol of every env comes from benchmarks/algorithm_rows.py (`PROTOCOL`), the one
place it is defined for both sides of the comparison.

Hyperparameters below are rl-baselines3-zoo's (https://github.com/DLR-RM/rl-baselines3-zoo),
hyperparams/*.yml at the commits named per entry (read with the code-search tool; the zoo's
LunarLander-v2 entries carry over to LunarLander-v3, same dynamics). Two zoo keys sb3_solve.py
does not interpret are handled here the way rl_zoo3/exp_manager.py does:
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

# hyperparams/dqn.yml @ ce95481b041fe5314c1b2f1a53940d169b9253fc ("# Tuned" Acrobot-v1 and
# LunarLander-v2; the two entries are identical). gradient_steps -1 = as many gradient steps as
# env steps collected (4 per train_freq of 4).
_DQN_ACROBOT_LUNAR = dict(
    n_timesteps=100_000,
    n_envs=1,
    policy="MlpPolicy",
    learning_rate=6.3e-4,
    batch_size=128,
    buffer_size=50_000,
    learning_starts=0,
    gamma=0.99,
    target_update_interval=250,
    train_freq=4,
    gradient_steps=-1,
    exploration_fraction=0.12,
    exploration_final_eps=0.1,
    policy_kwargs=dict(net_arch=[256, 256]),
)

# hyperparams/td3.yml @ a02f4fbfaefa1c24e9dadc11ff596dc51f740a90 and ddpg.yml @
# 1159e2840a3df711dcc590331110853a68027306, MountainCarContinuous-v0 ("# Tuned"): SB3 defaults
# plus OU noise of std 0.5.
_TD3_DDPG_MCC = dict(
    n_timesteps=300_000,
    n_envs=1,
    policy="MlpPolicy",
    noise_type="ornstein-uhlenbeck",
    noise_std=0.5,
)

# hyperparams/{sac,td3,ddpg}.yml @ 22e3ff2 (the v4 envs, here on v5): SB3's defaults after
# 10k random steps; TD3 and DDPG add Gaussian action noise of std 0.1.
MUJOCO_ENVS = ("HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Ant-v5")
_MUJOCO = {
    "sac": dict(n_timesteps=1_000_000, n_envs=1, policy="MlpPolicy", learning_starts=10_000),
    "td3": dict(
        n_timesteps=1_000_000,
        n_envs=1,
        policy="MlpPolicy",
        learning_starts=10_000,
        noise_type="normal",
        noise_std=0.1,
    ),
}
_MUJOCO["ddpg"] = _MUJOCO["td3"]
# hyperparams/ppo.yml @ 22e3ff2: `normalize: true` everywhere; tuned entries for three envs, Ant
# on SB3's defaults. "relu" stands for the zoo's nn.ReLU (resolved in `build`).
_PPO_TUNED_POLICY = dict(log_std_init=-2, ortho_init=False, activation_fn="relu",
                         net_arch=dict(pi=[256, 256], vf=[256, 256]))  # fmt: skip


def _zoo_ppo(batch_size, n_epochs, gamma, gae_lambda, lr, ent_coef, clip, grad, vf, policy=None):
    entry = dict(normalize=True, n_timesteps=1_000_000, n_envs=1, policy="MlpPolicy",
                 n_steps=512, batch_size=batch_size, n_epochs=n_epochs, gamma=gamma,
                 gae_lambda=gae_lambda, learning_rate=lr, ent_coef=ent_coef, clip_range=clip,
                 max_grad_norm=grad, vf_coef=vf)  # fmt: skip
    return {**entry, "policy_kwargs": dict(policy)} if policy else entry


_PPO_MUJOCO = {
    "HalfCheetah-v5": _zoo_ppo(
        64, 20, 0.98, 0.92, 2.0633e-05, 0.000401762, 0.1, 0.8, 0.58096, _PPO_TUNED_POLICY
    ),  # fmt: skip
    "Hopper-v5": _zoo_ppo(
        32, 5, 0.999, 0.99, 9.80828e-05, 0.00229519, 0.2, 0.7, 0.835671, _PPO_TUNED_POLICY
    ),  # fmt: skip
    "Walker2d-v5": _zoo_ppo(32, 20, 0.99, 0.95, 5.05041e-05, 0.000585045, 0.1, 1.0, 0.871923),
    "Ant-v5": dict(normalize=True, n_timesteps=1_000_000, n_envs=1, policy="MlpPolicy"),
}

ZOO_ADDITIONS = {
    ("dqn", "Acrobot-v1"): dict(_DQN_ACROBOT_LUNAR),
    ("dqn", "LunarLander-v3"): dict(_DQN_ACROBOT_LUNAR),
    # hyperparams/ppo.yml @ 208b6fdf3a9aa24de44b2e068c6e5f6a07d97fcc, Acrobot-v1
    ("ppo", "Acrobot-v1"): dict(
        normalize=True,
        n_envs=16,
        n_timesteps=1_000_000,
        policy="MlpPolicy",
        n_steps=256,
        gae_lambda=0.94,
        gamma=0.99,
        n_epochs=4,
        ent_coef=0.0,
    ),
    # hyperparams/ppo.yml @ 208b6fd, LunarLander-v2
    ("ppo", "LunarLander-v3"): dict(
        n_envs=16,
        n_timesteps=1_000_000,
        policy="MlpPolicy",
        n_steps=1024,
        batch_size=64,
        gae_lambda=0.98,
        gamma=0.999,
        n_epochs=4,
        ent_coef=0.01,
    ),
    # hyperparams/a2c.yml @ c6c209e7d487635f0b835fb916ec4468142b28ff, CartPole-v1 and Acrobot-v1
    ("a2c", "CartPole-v1"): dict(n_envs=8, n_timesteps=500_000, policy="MlpPolicy", ent_coef=0.0),
    ("a2c", "Acrobot-v1"): dict(
        normalize=True, n_envs=16, n_timesteps=500_000, policy="MlpPolicy", ent_coef=0.0
    ),
    # DDPG on Pendulum-v1: the zoo's ddpg.yml Pendulum entry has the same settings as its
    # td3.yml one in the versions read (1159e28 / a02f4fb, still Pendulum-v0, train_freq
    # [1, "episode"]); this takes sb3_solve.py's TD3 Pendulum-v1 entry (zoo 22e3ff2: train_freq
    # 1, gradient_steps 1), so DDPG and TD3 differ only in the algorithm.
    ("ddpg", "Pendulum-v1"): dict(sb3_solve.ZOO[("td3", "Pendulum-v1")]),
    # hyperparams/sac.yml @ c94924e5b31bce36920f29d3eb18b975231bdec4, MountainCarContinuous-v0
    ("sac", "MountainCarContinuous-v0"): dict(
        n_timesteps=50_000,
        n_envs=1,
        policy="MlpPolicy",
        learning_rate=3e-4,
        buffer_size=50_000,
        batch_size=512,
        ent_coef=0.1,
        train_freq=32,
        gradient_steps=32,
        gamma=0.9999,
        tau=0.01,
        learning_starts=0,
        use_sde=True,
        policy_kwargs=dict(log_std_init=-3.67, net_arch=[64, 64]),
    ),
    ("td3", "MountainCarContinuous-v0"): dict(_TD3_DDPG_MCC),
    ("ddpg", "MountainCarContinuous-v0"): dict(_TD3_DDPG_MCC),
    **{(algo, env): dict(entry) for algo, entry in _MUJOCO.items() for env in MUJOCO_ENVS},
    **{("ppo", env): entry for env, entry in _PPO_MUJOCO.items()},
}


def extend() -> None:
    """Adds our pairs, the A2C/DDPG classes and the shared eval protocol to sb3_solve."""
    from stable_baselines3 import A2C, DDPG

    from benchmarks.algorithm_rows import PROTOCOL  # stdlib-only at import time

    for key, entry in ZOO_ADDITIONS.items():
        if key in sb3_solve.ZOO:
            raise SystemExit(f"sb3_solve.py now has {key} itself: drop it from ZOO_ADDITIONS")
        sb3_solve.ZOO[key] = entry
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
    if patched.get("policy_kwargs", {}).get("activation_fn") == "relu":
        from torch import nn

        patched["policy_kwargs"] = {**patched["policy_kwargs"], "activation_fn": nn.ReLU}
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
