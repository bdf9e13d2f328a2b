"""Discounted (Monte-Carlo / n-step) returns, and the truncation fold shared by all estimators.

Williams 1992, "Simple Statistical Gradient-Following Algorithms for Connectionist
Reinforcement Learning", Machine Learning 8: REINFORCE weights log pi(a_t|s_t) by the return
G_t = r_t + gamma r_{t+1} + ...; with a baseline b(s_t) = V(s_t), by G_t - V(s_t).

Every estimator takes time-major tensors [T, N] (T steps of N envs):
`rewards`, `values` V(s_t), `discounts` (gamma where the episode goes on after step t, 0 where it
ended at t, terminated OR truncated) and `bootstrap_value` [N] = V(s_T) for the state after the
last step. Truncation is folded into the reward first (`fold_truncation`): an episode cut by a
time limit at step t is worth r_t + gamma V(final_obs_t), its true continuation, while a
terminated one is worth r_t alone. Then the recursions need no special case for either.
"""

from __future__ import annotations

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
    rewards: tf.Tensor,
    values: tf.Tensor,
    discounts: tf.Tensor,
    bootstrap_value: tf.Tensor,
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
