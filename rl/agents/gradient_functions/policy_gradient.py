"""Policy-gradient losses as pure functions: REINFORCE/A2C, PPO's clipped surrogate, the value
loss (optionally clipped, as in OpenAI baselines' PPO2) and the entropy bonus.

Williams 1992 (Machine Learning 8); Mnih et al. 2016, https://arxiv.org/abs/1602.01783;
Schulman et al. 2017, https://arxiv.org/abs/1707.06347 (eq. 7). Every function averages over the
samples an optional `mask` keeps, so an agent can drop samples without reshaping.
"""

from __future__ import annotations

import tensorflow as tf

from rl.registry import register_gradient_function


def masked_mean(x: tf.Tensor, mask: tf.Tensor | None = None) -> tf.Tensor:
    """Mean of `x` over samples where `mask` is 1 (all samples if None); 0 if none is."""
    if mask is None:
        return tf.reduce_mean(x)
    mask = tf.cast(mask, x.dtype)
    return tf.reduce_sum(x * mask) / tf.maximum(tf.reduce_sum(mask), 1.0)


@register_gradient_function("policy_gradient_loss")
def policy_gradient_loss(
    log_prob: tf.Tensor, advantage: tf.Tensor, mask: tf.Tensor | None = None
) -> tf.Tensor:
    """-mean(log pi(a|s) * A): the REINFORCE / A2C surrogate (A is treated as a constant)."""
    return -masked_mean(log_prob * tf.stop_gradient(advantage), mask)


@register_gradient_function("ppo_clip_loss")
def ppo_clip_loss(
    log_prob: tf.Tensor,
    old_log_prob: tf.Tensor,
    advantage: tf.Tensor,
    clip_range: tf.Tensor | float,
    mask: tf.Tensor | None = None,
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """(loss, clip fraction, approx KL) of PPO's clipped surrogate; approx KL is the low-variance
    estimator mean((ratio - 1) - log ratio) of KL(pi_old || pi), as SB3 and CleanRL log it."""
    advantage = tf.stop_gradient(advantage)
    log_ratio = log_prob - tf.stop_gradient(old_log_prob)
    ratio = tf.exp(log_ratio)
    clip_range = tf.cast(clip_range, ratio.dtype)
    unclipped = ratio * advantage
    clipped = tf.clip_by_value(ratio, 1.0 - clip_range, 1.0 + clip_range) * advantage
    loss = -masked_mean(tf.minimum(unclipped, clipped), mask)
    clip_fraction = masked_mean(tf.cast(tf.abs(ratio - 1.0) > clip_range, ratio.dtype), mask)
    approx_kl = masked_mean(tf.stop_gradient((ratio - 1.0) - log_ratio), mask)
    return loss, tf.stop_gradient(clip_fraction), approx_kl


@register_gradient_function("value_loss")
def value_loss(
    value: tf.Tensor,
    target: tf.Tensor,
    old_value: tf.Tensor | None = None,
    clip_range: tf.Tensor | float | None = None,
    mask: tf.Tensor | None = None,
) -> tf.Tensor:
    """0.5 * mean((V - target)^2); with `clip_range`, PPO2's pessimistic clipped version:
    0.5 * mean(max((V - target)^2, (V_old + clip(V - V_old, -eps, eps) - target)^2))."""
    target = tf.stop_gradient(target)
    squared = tf.square(value - target)
    if clip_range is not None:
        old_value = tf.stop_gradient(old_value)
        clip_range = tf.cast(clip_range, value.dtype)
        clipped = old_value + tf.clip_by_value(value - old_value, -clip_range, clip_range)
        squared = tf.maximum(squared, tf.square(clipped - target))
    return 0.5 * masked_mean(squared, mask)


@register_gradient_function("entropy_bonus")
def entropy_bonus(entropy: tf.Tensor, mask: tf.Tensor | None = None) -> tf.Tensor:
    """mean(H(pi(.|s))): the bonus the loss subtracts (times ent_coef) to keep exploring."""
    return masked_mean(entropy, mask)
