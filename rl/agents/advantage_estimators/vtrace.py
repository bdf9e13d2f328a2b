"""V-trace: off-policy targets and advantages with truncated importance weights (mu lags pi).

Espeholt et al. 2018, "IMPALA: Scalable Distributed Deep-RL with Importance Weighted
Actor-Learner Architectures", https://arxiv.org/abs/1802.01561, section 4. docs/impala.md maps
each formula to its line here, with the episode-end conventions (`rl.rollout.returns`) and the
special cases the tests check (pi = mu: n-step returns; lambda < 1: GAE(lambda)'s return).
"""

from __future__ import annotations

import tensorflow as tf

from rl.registry import register_advantage_estimator


@register_advantage_estimator("vtrace")
def vtrace(
    rewards: tf.Tensor,
    values: tf.Tensor,
    discounts: tf.Tensor,
    bootstrap_value: tf.Tensor,
    log_rhos: tf.Tensor,
    rho_bar: float | tf.Tensor | None = 1.0,
    c_bar: float | tf.Tensor | None = 1.0,
    lambda_: float | tf.Tensor = 1.0,
    pg_rho_bar: float | None = None,
) -> tuple[tf.Tensor, tf.Tensor]:
    """(policy-gradient advantages A_s, value targets v_s), both [T, N]; a threshold of None does
    not clip, `pg_rho_bar` None means `rho_bar`."""
    rewards, values, discounts, bootstrap_value, log_rhos = (
        tf.stop_gradient(tf.convert_to_tensor(x, tf.float32))
        for x in (rewards, values, discounts, bootstrap_value, log_rhos)
    )
    rhos = tf.exp(log_rhos)
    clipped_rhos = _clip(rhos, rho_bar)
    cs = lambda_ * _clip(rhos, c_bar)
    next_values = tf.concat([values[1:], bootstrap_value[None]], axis=0)
    deltas = clipped_rhos * (rewards + discounts * next_values - values)
    # v_s - V(x_s) = delta_s + discount_s c_s (v_{s+1} - V(x_{s+1})), zero after the last step.
    vs_minus_values = tf.scan(
        lambda later, step: step[0] + step[1] * step[2] * later,
        (deltas, discounts, cs),
        initializer=tf.zeros_like(bootstrap_value),
        reverse=True,
    )
    vs = vs_minus_values + values
    next_vs = tf.concat([vs[1:], bootstrap_value[None]], axis=0)
    pg_rhos = _clip(rhos, rho_bar if pg_rho_bar is None else pg_rho_bar)
    advantages = pg_rhos * (rewards + discounts * next_vs - values)
    return advantages, vs


def _clip(rhos: tf.Tensor, threshold: float | tf.Tensor | None) -> tf.Tensor:
    """min(threshold, rhos); rhos unchanged for None."""
    return rhos if threshold is None else tf.minimum(tf.cast(threshold, rhos.dtype), rhos)
