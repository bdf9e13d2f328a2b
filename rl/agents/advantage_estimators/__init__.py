"""Advantage estimators (Monte-Carlo returns, GAE, V-trace), registered by name.

Monte-Carlo returns (`discounted_returns`) live with the rollout's return math, below the agents
(rl/rollout/returns.py).
"""

from rl.agents.advantage_estimators.gae import gae
from rl.agents.advantage_estimators.vtrace import vtrace
from rl.rollout.returns import discounted_returns  # registers "discounted_returns"

__all__ = ["discounted_returns", "gae", "vtrace"]
