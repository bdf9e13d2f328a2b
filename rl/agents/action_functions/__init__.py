"""Batched TF action-selection functions, registered by name and role.

The role says how an agent calls the function (`rl.agents.function_slots`):
- "q_exploration": f(q_values [B, A], generator, epsilon) -> int64 actions [B];
- "q_evaluation": f(q_values [B, A], generator=None) -> int64 actions [B];
- "logits_sample": f(logits [B, A], generator) -> int64 actions [B];
- "action_noise": f(action, generator, sigma, low, high) -> noisy action;
- "stateful_action_noise": f(action, generator, state, theta, sigma, low, high) ->
  (noisy action, new state), one state row per env copy, kept and checkpointed by the agent.
"""

from rl.agents.action_functions.epsilon_greedy import epsilon_greedy
from rl.agents.action_functions.gaussian_noise import gaussian_noise
from rl.agents.action_functions.greedy import greedy
from rl.agents.action_functions.ornstein_uhlenbeck import (
    ornstein_uhlenbeck,
    ornstein_uhlenbeck_step,
)
from rl.rollout.policy import sample  # registers "sample", the policy-gradient agents' sampler

__all__ = [
    "epsilon_greedy",
    "gaussian_noise",
    "greedy",
    "ornstein_uhlenbeck",
    "ornstein_uhlenbeck_step",
    "sample",
]
