"""Generalized Advantage Estimation, GAE(lambda).

Schulman et al. 2015, https://arxiv.org/abs/1506.02438: delta_t = r_t + discount_t V(s_{t+1}) -
V(s_t), A_t = delta_t + lambda discount_t A_{t+1}. Inputs follow `rl.rollout.returns`.
"""

from __future__ import annotations

import tensorflow as tf

from rl.registry import register_advantage_estimator


@register_advantage_estimator("gae")
def gae(
    rewards: tf.Tensor,
    values: tf.Tensor,
    discounts: tf.Tensor,
    bootstrap_value: tf.Tensor,
    lambda_: float | tf.Tensor = 0.95,
) -> tuple[tf.Tensor, tf.Tensor]:
    """Returns (advantages, returns) with returns = advantages + values (the value target)."""
    next_values = tf.concat([values[1:], bootstrap_value[None]], axis=0)
    deltas = rewards + discounts * next_values - values
    advantages = tf.scan(
        lambda next_advantage, step: step[0] + lambda_ * step[1] * next_advantage,
        (deltas, discounts),
        initializer=tf.zeros_like(bootstrap_value),
        reverse=True,
    )
    return advantages, advantages + values
