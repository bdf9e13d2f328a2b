"""Ornstein-Uhlenbeck exploration noise (DDPG's original choice), batched over env copies.

Lillicrap et al. 2015, https://arxiv.org/abs/1509.02971 (Section 7: theta = 0.15, sigma = 0.2):
x_{t+1} = x_t + theta (mu - x_t) dt + sigma sqrt(dt) N(0, 1), mu = 0, one x per env copy, which
the caller keeps in a checkpointed tf.Variable and zeroes at episode ends; this function is pure.
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.action_functions.gaussian_noise import half_range
from rl.registry import register_action_function


def ornstein_uhlenbeck_step(
    state: tf.Tensor, standard_normal: tf.Tensor, theta: float, sigma: float, dt: float = 1.0
) -> tf.Tensor:
    """One Euler-Maruyama step of the OU process towards mu = 0."""
    return state - theta * state * dt + sigma * (dt**0.5) * standard_normal


@register_action_function("ornstein_uhlenbeck", role="stateful_action_noise")
def ornstein_uhlenbeck(
    action: tf.Tensor,
    generator: tf.random.Generator,
    state: tf.Tensor,
    theta: float,
    sigma: float,
    low: tf.Tensor,
    high: tf.Tensor,
    dt: float = 1.0,
) -> tuple[tf.Tensor, tf.Tensor]:
    """(clip(action + half_range * x_{t+1}, low, high), x_{t+1}) for state x_t [num_envs, ...]."""
    new_state = ornstein_uhlenbeck_step(state, generator.normal(tf.shape(state)), theta, sigma, dt)
    noisy = action + new_state * half_range(low, high)
    return tf.clip_by_value(noisy, low, high), new_state
