"""Quantile-regression distributional RL (QR-DQN): the target quantiles and quantile Huber loss.

Dabney, Rowland, Bellemare & Munos 2017, "Distributional Reinforcement Learning with Quantile
Regression", https://arxiv.org/abs/1710.10044 (Algorithm 1, eq. 9-10). N equally weighted
quantiles at tau_hat_i = (2i - 1) / 2N; unlike C51 there is no fixed support to choose. Each
theta_i is pulled towards every target T theta_j by the asymmetric Huber loss
rho^kappa_tau(u) = |tau - 1{u < 0}| * L_kappa(u) / kappa, whose minimiser is the tau-quantile.
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.gradient_functions.td import huber
from rl.registry import register_gradient_function


def quantile_midpoints(num_quantiles: int | tf.Tensor) -> tf.Tensor:
    """tau_hat_i = (2i - 1) / 2N for i = 1..N: the fractions the N outputs estimate ([N])."""
    count = tf.cast(num_quantiles, tf.float32)
    return (tf.range(count, dtype=tf.float32) + 0.5) / count


@register_gradient_function("quantile_q_values")
def quantile_q_values(quantiles: tf.Tensor) -> tf.Tensor:
    """Q(s, a) = (1/N) sum_i theta_i(s, a), each action's mean return: [B, A, N] -> [B, A]."""
    return tf.reduce_mean(quantiles, axis=-1)


@register_gradient_function("quantile_target")
def quantile_target(
    reward: tf.Tensor,
    discount: tf.Tensor,
    next_quantiles_target: tf.Tensor,
    next_q_policy: tf.Tensor,
) -> tf.Tensor:
    """T theta_j = r + discount * theta_j(s', a*) [B, N], a* = argmax_a next_q_policy(s', a) (the
    target net's own mean Q in the paper, the online net's with double Q); no gradient."""
    next_action = tf.argmax(next_q_policy, axis=-1, output_type=tf.int64)
    next_quantiles = tf.gather(next_quantiles_target, next_action, axis=1, batch_dims=1)
    return tf.stop_gradient(reward[:, None] + discount[:, None] * next_quantiles)


@register_gradient_function("quantile_huber_loss", role="quantile_loss")
def quantile_huber_loss(
    quantiles: tf.Tensor,
    action: tf.Tensor,
    target_quantiles: tf.Tensor,
    weights: tf.Tensor | None = None,
    kappa: float | tf.Tensor = 1.0,
) -> tuple[tf.Tensor, tf.Tensor]:
    """The paper's eq. 10: sum_i mean_j rho^kappa_{tau_hat_i}(T theta_j - theta_i(s, a)), kappa the
    Huber threshold: (weighted mean, per-sample loss [B], the replay priority as C51's in Rainbow).
    """
    taken = tf.gather(quantiles, tf.cast(action, tf.int64), axis=1, batch_dims=1)  # [B, N]
    tau = quantile_midpoints(tf.shape(taken)[-1])  # [N]
    # u[b, i, j] = T theta_j - theta_i: every target sample against every estimated quantile.
    u = tf.stop_gradient(target_quantiles)[:, None, :] - taken[:, :, None]
    below = tf.cast(u < 0.0, tf.float32)  # a constant: the weight's gradient is zero anyway
    rho = tf.abs(tau[None, :, None] - below) * huber(u, kappa) / kappa
    per_sample = tf.reduce_sum(tf.reduce_mean(rho, axis=2), axis=1)
    weighted = per_sample if weights is None else per_sample * weights
    return tf.reduce_mean(weighted), per_sample
