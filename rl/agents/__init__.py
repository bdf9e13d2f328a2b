"""Agents (one module per algorithm) and their action, gradient and advantage functions."""

from rl.agents import (  # noqa: F401
    a2c,
    action_functions,
    advantage_estimators,
    c51,
    cmaes,
    dqn,
    drqn,
    gradient_functions,
    impala,
    maddpg,
    offpac,
    ppo,
    ppo_recurrent,
    qrdqn,
    reinforce,
    sac,
    td3,
)
from rl.agents.base import Agent

__all__ = ["Agent"]
