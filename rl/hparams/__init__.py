"""Hyper-parameters: the `HParams` class, step schedules and the registered hparams sets.

Importing this package registers every schedule and every hparams set (explicit imports, no
star imports), so `rl.registry.hparams` and `rl.registry.schedules` are complete afterwards.
"""

from rl.hparams.hparams import HParams, TypeSpec
from rl.hparams.schedules import Schedule, as_schedule, parse_schedule

# isort: split
# Registered hparams sets: one module per algorithm family, imported for its registration side
# effect. Add a family by adding its module name to this one sorted import.
from rl.hparams import (  # noqa: F401
    a2c,
    acrobot,
    atari,
    cmaes,
    coinrun,
    ddpg,
    dqn,
    dqn_compiled,
    dqn_family,
    goal_conditioned,
    impala,
    legal_moves,
    lunarlander,
    maddpg,
    minigrid,
    mountaincar,
    mountaincar_continuous,
    mujoco,
    offpac,
    ppo,
    ppo_compiled,
    qrdqn,
    recurrent,
    reinforce,
    sac,
    taxi,
    td3,
)

# isort: split
# Sets published by `python -m rl.tune --publish` (rl/hparams/tuned/): after their parents.
from rl.hparams import tuned  # noqa: F401

__all__ = ["HParams", "Schedule", "TypeSpec", "as_schedule", "parse_schedule"]
