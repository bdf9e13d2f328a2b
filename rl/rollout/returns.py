"""Discounted returns of time-major rollouts that stop at episode ends: the return math the
rollout API and the agents' advantage estimators share.

After an end (Pardo et al. 2018, "Time Limits in Reinforcement Learning",
https://arxiv.org/abs/1712.00378): terminated, nothing; truncated, gamma V(final_obs_t) when
`final_values` are given. Truncation is folded into the reward first (`fold_truncation`) and
`discounts` is 0 at any end, so the recursions need no special case for either.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from rl.registry import register_advantage_estimator


def fold_truncation(
    rewards: tf.Tensor, truncated: tf.Tensor, final_values: tf.Tensor, gamma: float
) -> tf.Tensor:
    """r_t + gamma V(final_obs_t) where the episode was truncated at t, r_t elsewhere."""
    truncated = tf.cast(truncated, rewards.dtype)
    return rewards + gamma * truncated * final_values


def episode_discounts(terminated: tf.Tensor, truncated: tf.Tensor, gamma: float) -> tf.Tensor:
    """gamma where the episode continues after step t, 0 where it ended (either way)."""
    ended = tf.logical_or(tf.cast(terminated, tf.bool), tf.cast(truncated, tf.bool))
    return gamma * (1.0 - tf.cast(ended, tf.float32))


@register_advantage_estimator("discounted_returns")
def discounted_returns(
    rewards: tf.Tensor, values: tf.Tensor, discounts: tf.Tensor, bootstrap_value: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor]:
    """Returns (advantages, returns): G_t = r_t + discount_t G_{t+1}, G_T = bootstrap_value,
    and advantages G_t - V(s_t). Computed by a reverse `tf.scan` over time."""
    returns = tf.scan(
        lambda next_return, step: step[0] + step[1] * next_return,
        (rewards, discounts),
        initializer=bootstrap_value,
        reverse=True,
    )
    return returns - values, returns


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
