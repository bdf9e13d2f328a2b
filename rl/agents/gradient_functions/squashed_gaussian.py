"""Tanh-squashed diagonal Gaussian policy rescaled to a Box's bounds (SAC's policy class).

Haarnoja et al. 2018, https://arxiv.org/abs/1801.01290, Appendix C: a = tanh(u), u ~ N(mean,
std), log pi(a|s) = log N(u; mean, std) - sum_i log(1 - tanh(u_i)^2), minus sum_i log(scale_i)
for the rescaling. `log(1 - tanh(u)^2)` is computed as `2 * (log 2 - u - softplus(-2u))`, finite
for every u (the naive form is -inf once tanh(u) rounds to +-1, near |u| > 9 in float32).
`squashed_gaussian` builds the same distribution from TFP bijectors (the tests' check).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import tensorflow as tf

from rl.registry import register_gradient_function

if TYPE_CHECKING:
    from tensorflow_probability import distributions as tfd

LOG_2 = math.log(2.0)


def log_one_minus_tanh_squared(u: tf.Tensor) -> tf.Tensor:
    """log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)), stable for any u."""
    return 2.0 * (LOG_2 - u - tf.math.softplus(-2.0 * u))


def bounds_center_scale(
    low: tf.Tensor, high: tf.Tensor, dtype: tf.DType = tf.float32
) -> tuple[tf.Tensor, tf.Tensor]:
    """(center, half-range) of a Box: a' = center + scale * a maps [-1, 1] onto [low, high]."""
    low = tf.cast(low, dtype)
    high = tf.cast(high, dtype)
    return (high + low) / 2.0, (high - low) / 2.0


@register_gradient_function("squashed_gaussian_sample")
def squashed_gaussian_sample(
    mean: tf.Tensor, log_std: tf.Tensor, noise: tf.Tensor, low: tf.Tensor, high: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor]:
    """Reparameterized sample action = center + scale * tanh(mean + exp(log_std) * noise) and its
    log-prob: gradients flow to mean and log_std, as SAC's policy loss needs."""
    std = tf.exp(log_std)
    u = mean + std * noise
    center, scale = bounds_center_scale(low, high, mean.dtype)
    # log N(u; mean, std) with (u - mean) / std = noise exactly.
    gaussian = -0.5 * tf.square(noise) - log_std - 0.5 * math.log(2.0 * math.pi)
    log_det = log_one_minus_tanh_squared(u) + tf.math.log(scale)
    log_prob = tf.reduce_sum(gaussian - log_det, axis=-1)
    return center + scale * tf.tanh(u), log_prob


def squashed_gaussian(
    mean: tf.Tensor, std: tf.Tensor, low: tf.Tensor, high: tf.Tensor
) -> tfd.Distribution:
    """The same policy as a tfp distribution: Independent(Shift(c) o Scale(s) o Tanh (N)).
    TF Probability is imported on first use (rl/models/actor_critic.py says why)."""
    from tensorflow_probability import bijectors as tfb
    from tensorflow_probability import distributions as tfd

    center, scale = bounds_center_scale(low, high, mean.dtype)
    bijector = tfb.Chain([tfb.Shift(center), tfb.Scale(scale), tfb.Tanh()])
    return tfd.Independent(
        tfd.TransformedDistribution(tfd.Normal(mean, std), bijector), reinterpreted_batch_ndims=1
    )
