"""Batched TF action-selection functions, registered by name."""

from rl.agents.action_functions.epsilon_greedy import epsilon_greedy
from rl.agents.action_functions.greedy import greedy
from rl.agents.action_functions.sample import sample

__all__ = ["epsilon_greedy", "greedy", "sample"]
