"""Losses of the deterministic- and soft-actor-critic agents (DDPG, TD3, SAC), as pure functions.

DDPG: https://arxiv.org/abs/1509.02971; TD3: https://arxiv.org/abs/1802.09477; SAC:
https://arxiv.org/abs/1801.01290 and https://arxiv.org/abs/1812.05905 (entropy tuning).
`next_q_targets` / `q_values` are [C, B], one row per critic (DDPG has C = 1).
"""

from __future__ import annotations

import tensorflow as tf

from rl.registry import register_gradient_function


@register_gradient_function("smoothed_target_action")
def smoothed_target_action(
    target_action: tf.Tensor, noise: tf.Tensor, noise_clip: float, low: tf.Tensor, high: tf.Tensor
) -> tf.Tensor:
    """TD3's target policy smoothing: clip(mu'(s') + clip(noise, -c, c), low, high); `noise` is
    already scaled to half-range units (0: DDPG's target action)."""
    clipped = tf.clip_by_value(noise, -noise_clip, noise_clip)
    return tf.clip_by_value(target_action + clipped, low, high)


@register_gradient_function("clipped_double_q_target")
def clipped_double_q_target(
    reward: tf.Tensor, discount: tf.Tensor, next_q_targets: tf.Tensor
) -> tf.Tensor:
    """r + discount * min_c Q'_c(s', a'): TD3's clipped double Q (C = 1: DDPG's target)."""
    return reward + discount * tf.reduce_min(next_q_targets, axis=0)


@register_gradient_function("critic_loss")
def critic_loss(
    q_values: tf.Tensor, td_target: tf.Tensor, weights: tf.Tensor | None = None
) -> tuple[tf.Tensor, tf.Tensor]:
    """sum_c mean_b w_b * 0.5 (y_b - Q_c(s_b, a_b))^2, y fixed: (loss, td_error [C, B])."""
    td_error = tf.stop_gradient(td_target)[None, :] - q_values
    per_sample = 0.5 * tf.square(td_error)
    if weights is not None:
        per_sample = per_sample * weights[None, :]
    return tf.reduce_sum(tf.reduce_mean(per_sample, axis=-1)), td_error


@register_gradient_function("deterministic_actor_loss")
def deterministic_actor_loss(q_of_policy_action: tf.Tensor) -> tf.Tensor:
    """DDPG/TD3 policy loss: -mean_b Q_1(s_b, mu(s_b)) (the first critic only, as in TD3)."""
    return -tf.reduce_mean(q_of_policy_action)


@register_gradient_function("soft_q_target")
def soft_q_target(
    reward: tf.Tensor,
    discount: tf.Tensor,
    next_q_targets: tf.Tensor,
    next_log_prob: tf.Tensor,
    alpha: tf.Tensor | float,
) -> tf.Tensor:
    """SAC's target: r + discount * (min_c Q'_c(s', a') - alpha * log pi(a'|s')), a' ~ pi(s')."""
    soft_value = tf.reduce_min(next_q_targets, axis=0) - alpha * next_log_prob
    return reward + discount * soft_value


@register_gradient_function("sac_actor_loss")
def sac_actor_loss(
    q_of_policy_action: tf.Tensor, log_prob: tf.Tensor, alpha: tf.Tensor | float
) -> tf.Tensor:
    """mean_b (alpha * log pi(a_b|s_b) - min_c Q_c(s_b, a_b)), a_b reparameterized, alpha fixed."""
    min_q = tf.reduce_min(q_of_policy_action, axis=0)
    return tf.reduce_mean(tf.stop_gradient(alpha) * log_prob - min_q)


@register_gradient_function("sac_alpha_loss")
def sac_alpha_loss(log_alpha: tf.Tensor, log_prob: tf.Tensor, target_entropy: float) -> tf.Tensor:
    """-mean_b log_alpha * (log pi(a_b|s_b) + target_entropy): raises alpha while the entropy is
    below the target (Haarnoja et al. 2018b, eq. 18; log alpha as the variable, as SB3 does)."""
    return -tf.reduce_mean(log_alpha * tf.stop_gradient(log_prob + target_entropy))
