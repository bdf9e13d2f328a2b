"""Advantage estimators (Monte-Carlo returns, GAE, V-trace), registered by name.

The policy-gradient agents of the algorithms issue fill this registry.
"""

from rl.agents.advantage_estimators.gae import gae
from rl.agents.advantage_estimators.returns import (
    discounted_returns,
    episode_discounts,
    fold_truncation,
)
from rl.agents.advantage_estimators.vtrace import vtrace

__all__ = ["discounted_returns", "episode_discounts", "fold_truncation", "gae", "vtrace"]
