"""What the algorithm table compares: the eval protocol per env (both sides follow it), and the
rows (our hparams set, SB3's algorithm, env, env-step budget). Standard library only:
benchmarks/sb3_zoo_peers.py, in the peers venv, imports `PROTOCOL` from here."""

from __future__ import annotations

from dataclasses import dataclass

# The eval protocol per env: the ONE definition both sides use (sb3_zoo_peers.py copies it into
# benchmarks/peers/sb3_solve.py's EVAL table; ours passes it as hparam overrides). every: env
# steps between evaluations; episodes: greedy episodes per evaluation; threshold: stop when the
# mean reaches it.
PROTOCOL: dict[str, dict[str, float]] = {
    "CartPole-v1": {"every": 5000, "episodes": 10, "threshold": 475.0},
    "Acrobot-v1": {"every": 5000, "episodes": 10, "threshold": -100.0},
    "LunarLander-v3": {"every": 10000, "episodes": 10, "threshold": 200.0},
    "Pendulum-v1": {"every": 2000, "episodes": 5, "threshold": -200.0},
    "MountainCarContinuous-v0": {"every": 5000, "episodes": 10, "threshold": 90.0},
    # MuJoCo: the zoo's 10 deterministic episodes; thresholds are gymnasium's reward_threshold
    # (Walker2d has none: Hopper's).
    "HalfCheetah-v5": {"every": 10000, "episodes": 10, "threshold": 4800.0},
    "Hopper-v5": {"every": 10000, "episodes": 10, "threshold": 3800.0},
    "Walker2d-v5": {"every": 10000, "episodes": 10, "threshold": 3800.0},
    "Ant-v5": {"every": 10000, "episodes": 10, "threshold": 6000.0},
}


SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class Row:
    """One line of the table: our set against SB3's `algo` on `env`, `budget` env steps each."""

    set: str
    algo: str
    env: str
    budget: int
    zoo_steps: int  # the zoo's n_timesteps for the pair (reference for the budget)
    # True: no early stop, both sides train the whole budget and the table reports the final
    # evaluation (MuJoCo, where a return keeps rising long past any threshold).
    full_budget: bool = False


# Cheapest first: the default run order.
ROWS: tuple[Row, ...] = (
    Row("ppo_cartpole", "ppo", "CartPole-v1", 100_000, 100_000),
    Row("dqn_cartpole", "dqn", "CartPole-v1", 100_000, 50_000),
    Row("a2c_cartpole", "a2c", "CartPole-v1", 500_000, 500_000),
    Row("sac_pendulum", "sac", "Pendulum-v1", 30_000, 20_000),
    Row("td3_pendulum", "td3", "Pendulum-v1", 30_000, 20_000),
    Row("ddpg_pendulum", "ddpg", "Pendulum-v1", 30_000, 20_000),
    Row("dqn_acrobot", "dqn", "Acrobot-v1", 100_000, 100_000),
    Row("ppo_acrobot", "ppo", "Acrobot-v1", 500_000, 1_000_000),
    Row("a2c_acrobot", "a2c", "Acrobot-v1", 500_000, 500_000),
    Row("sac_mountaincar_continuous", "sac", "MountainCarContinuous-v0", 50_000, 50_000),
    Row("td3_mountaincar_continuous", "td3", "MountainCarContinuous-v0", 100_000, 300_000),
    Row("ddpg_mountaincar_continuous", "ddpg", "MountainCarContinuous-v0", 100_000, 300_000),
    Row("dqn_lunarlander", "dqn", "LunarLander-v3", 200_000, 100_000),
    Row("ppo_lunarlander", "ppo", "LunarLander-v3", 1_000_000, 1_000_000),
)


# MuJoCo at 300k env steps, the budget this machine allows (~1 h of a core for ours, ~1.7 h for
# SB3 per run): run only when named with --sets, they have their own generated section.
_MUJOCO_ENVS = {"halfcheetah": "HalfCheetah-v5", "hopper": "Hopper-v5",
                "walker2d": "Walker2d-v5", "ant": "Ant-v5"}  # fmt: skip


MUJOCO_ROWS: tuple[Row, ...] = (
    *(
        Row(f"{algo}_{name}", algo, env, 300_000, 1_000_000, full_budget=True)
        for algo in ("sac", "td3", "ppo")
        for name, env in _MUJOCO_ENVS.items()
    ),
    Row("ddpg_halfcheetah", "ddpg", "HalfCheetah-v5", 300_000, 1_000_000, full_budget=True),
)


ALL_ROWS = ROWS + MUJOCO_ROWS


def overrides(env: str, budget: int, full_budget: bool = False) -> str:
    """Our side of the protocol: the hparam overrides that make train.py follow PROTOCOL[env]."""
    p = PROTOCOL[env]
    stop = "" if full_budget else f"stop_at_eval_return={p['threshold']},"
    protocol = f"eval.every_steps={p['every']},eval.episodes={p['episodes']}"
    return f"{stop}{protocol},train_steps={budget}"
