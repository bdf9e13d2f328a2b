"""Agents (one module per algorithm) and their action, gradient and advantage functions."""

from rl.agents import (  # noqa: F401
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
    policy_gradient,
    ppo_recurrent,
    qrdqn,
    sac,
    td3,
)
from rl.agents.base import Agent

__all__ = ["Agent"]
