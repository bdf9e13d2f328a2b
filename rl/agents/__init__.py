"""Agents (one module per algorithm) and their action, gradient and advantage functions."""

from rl.agents import action_functions, advantage_estimators, gradient_functions  # noqa: F401
from rl.agents import dqn  # noqa: F401  (registers "dqn")
from rl.agents.base import Agent

__all__ = ["Agent"]
