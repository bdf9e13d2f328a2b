"""Monte-Carlo returns of a time-major rollout that stop at episode ends.

G_t = r_t + gamma G_{t+1} inside an episode (Williams 1992, "Simple Statistical
Gradient-Following Algorithms for Connectionist Reinforcement Learning", Machine Learning 8).
At an episode end the sum stops, and what follows depends on how it ended (Pardo et al. 2018,
"Time Limits in Reinforcement Learning", https://arxiv.org/abs/1712.00378):

- terminated at t: G_t = r_t (the episode is over);
- truncated at t: G_t = r_t + gamma V(final_obs_t) with `final_values`, else r_t (the plain
  sum of the rewards seen, which is what a Monte-Carlo method without a critic can use);
- still running after the last step T-1: G_{T-1} = r_{T-1} + gamma V(s_T) with
  `bootstrap_value`, else r_{T-1}.

It is the same arithmetic as the agents' `discounted_returns` estimator (truncation folded into
the reward, discount 0 at every end), so a new algorithm and REINFORCE agree on every number.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from rl.agents.advantage_estimators import discounted_returns, episode_discounts, fold_truncation


def monte_carlo_returns(
    reward: Any,
    terminated: Any,
    truncated: Any,
    gamma: float,
    final_values: Any | None = None,
    bootstrap_value: Any | None = None,
) -> tf.Tensor:
    """[T, N] returns-to-go; `final_values` [T, N] (read where truncated) and `bootstrap_value`
    [N] default to 0 (no critic: returns are sums of observed rewards)."""
    reward = tf.convert_to_tensor(reward, tf.float32)
    final_values = tf.zeros_like(reward) if final_values is None else final_values
    bootstrap_value = tf.zeros_like(reward[0]) if bootstrap_value is None else bootstrap_value
    rewards = fold_truncation(reward, truncated, tf.convert_to_tensor(final_values), gamma)
    discounts = episode_discounts(terminated, truncated, gamma)
    _, returns = discounted_returns(
        rewards, tf.zeros_like(reward), discounts, tf.convert_to_tensor(bootstrap_value)
    )
    return returns
