"""Batched TF action-selection functions, registered by name."""

from rl.agents.action_functions.epsilon_greedy import epsilon_greedy
from rl.agents.action_functions.gaussian_noise import gaussian_noise
from rl.agents.action_functions.greedy import greedy
from rl.agents.action_functions.ornstein_uhlenbeck import (
    ornstein_uhlenbeck,
    ornstein_uhlenbeck_step,
)
from rl.agents.action_functions.sample import sample

__all__ = [
    "epsilon_greedy",
    "gaussian_noise",
    "greedy",
    "ornstein_uhlenbeck",
    "ornstein_uhlenbeck_step",
    "sample",
]
