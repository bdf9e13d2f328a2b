"""Gaussian exploration noise for deterministic continuous policies (TD3's default).

Fujimoto et al. 2018, https://arxiv.org/abs/1802.09477: a = clip(mu(s) + N(0, sigma^2), low,
high). Here sigma is relative to the Box's half-range, so one value fits any action bounds.
"""

from __future__ import annotations

import tensorflow as tf

from rl.registry import register_action_function


def half_range(low: tf.Tensor, high: tf.Tensor) -> tf.Tensor:
    return (tf.cast(high, tf.float32) - tf.cast(low, tf.float32)) / 2.0


@register_action_function("gaussian_noise", role="action_noise")
def gaussian_noise(
    action: tf.Tensor,
    generator: tf.random.Generator,
    sigma: tf.Tensor | float,
    low: tf.Tensor,
    high: tf.Tensor,
) -> tf.Tensor:
    """clip(action + sigma * (high - low) / 2 * N(0, 1), low, high), drawn with `generator`."""
    noise = generator.normal(tf.shape(action)) * tf.cast(sigma, tf.float32) * half_range(low, high)
    return tf.clip_by_value(action + noise, low, high)
