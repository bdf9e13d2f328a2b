"""V-trace: off-policy value targets and policy-gradient advantages with truncated importance
weights, for data collected by a behaviour policy mu that lags the learner's policy pi.

Espeholt et al. 2018, "IMPALA: Scalable Distributed Deep-RL with Importance Weighted
Actor-Learner Architectures", https://arxiv.org/abs/1802.01561, section 4 (4.1: the
target, 4.2: the actor-critic).

With rho_t = min(rho_bar, pi(a_t|x_t) / mu(a_t|x_t)) and c_t = lambda min(c_bar, pi / mu):

    delta_t V = rho_t (r_t + gamma V(x_{t+1}) - V(x_t))
    v_s = V(x_s) + sum_{t>=s} gamma^{t-s} (prod_{s<=i<t} c_i) delta_t V           (eq. 1)
        = V(x_s) + delta_s V + gamma c_s (v_{s+1} - V(x_{s+1}))                   (Remark 1)
    A_s = rho_s^pg (r_s + gamma v_{s+1} - V(x_s))                              (section 4.2)

v_s is the value target (section 4.2: the value loss is (v_s - V(x_s))^2), A_s the weight of
grad log pi(a_s|x_s) in the policy gradient; rho^pg uses its own threshold `pg_rho_bar`
(rho_bar unless given), as in the reference implementation (deepmind/scalable_agent,
vtrace.py). rho_bar sets which policy's value v_s estimates (pi for rho_bar = inf, closer to mu
below); c_bar only the speed of convergence (the trace cutting). With pi = mu and
rho_bar, c_bar >= 1, lambda = 1, v_s is the n-step bootstrapped return and A_s = v_s - V(x_s):
the on-policy `discounted_returns` estimator; with lambda < 1, v_s is GAE(lambda)'s return.

Inputs follow `rl.rollout.returns`: time-major [T, N], `discounts` gamma
where the episode goes on after step t and 0 where it ended there (terminated or truncated),
truncations already folded into the rewards (`fold_truncation`: r_t + gamma V(final_obs_t)),
`bootstrap_value` = V(x_T) [N]. So at an episode end the trace and the bootstrap stop and
v_t = V(x_t) + rho_t (r_t - V(x_t)) with r_t the (folded) reward: no bootstrap after a
termination, V(final_obs) after a truncation. `log_rhos` = log pi(a_t|x_t) - log mu(a_t|x_t);
every input is treated as a constant (the targets carry no gradient).
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
    """Returns (policy-gradient advantages A_s, value targets v_s), both [T, N].

    A threshold of None means no clipping (plain importance weights); `pg_rho_bar` None means
    `rho_bar`.
    """
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
