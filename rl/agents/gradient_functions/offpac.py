"""Off-policy actor-critic (Off-PAC) losses as pure functions.

Degris, White & Sutton 2012, "Off-Policy Actor-Critic", ICML, https://arxiv.org/abs/1205.4839.
`log_prob` = log pi(a_t|s_t) under the current weights, `behaviour_log_prob` = log b(a_t|s_t).

Critic. The paper's GTD(lambda) converges for linear features; a neural critic regresses the
forward view of the same target with truncated weights, the V-trace target (Espeholt et al.
2018, https://arxiv.org/abs/1802.01561, eq. 1): with rho_bar = c_bar = inf the paper's
importance-sampled lambda-return; truncating at 1 bounds the variance (of a policy between b, pi).

Actor. The paper weighs rho_t psi_t by the off-policy lambda-return minus V(s_t); here the weight
is truncated and the corrected return from t+1 is the critic's target v_{t+1}:

    A_t = r_t + gamma ((1 - lambda) V(s_{t+1}) + lambda v_{t+1}) - V(s_t),
    actor loss = -mean(min(rho_bar, rho_t) A_t log pi(a_t|s_t))   (weights and A constant).

lambda = 0 gives the paper's TD-error actor; lambda = 1 IMPALA's policy gradient.
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.advantage_estimators.vtrace import vtrace
from rl.agents.gradient_functions.policy_gradient import masked_mean
from rl.registry import register_gradient_function


@register_gradient_function("truncated_importance_weights")
def truncated_importance_weights(
    log_prob: tf.Tensor, behaviour_log_prob: tf.Tensor, rho_bar: float | tf.Tensor | None
) -> tf.Tensor:
    """min(rho_bar, pi/b) from log-probs (rho_bar None: no truncation); a constant (no
    gradient): the weights correct the sampling distribution, they are not optimized."""
    rho = tf.exp(tf.stop_gradient(log_prob) - tf.stop_gradient(behaviour_log_prob))
    return rho if rho_bar is None else tf.minimum(tf.cast(rho_bar, rho.dtype), rho)


@register_gradient_function("offpac_critic_targets")
def offpac_critic_targets(
    rewards: tf.Tensor,
    values: tf.Tensor,
    discounts: tf.Tensor,
    bootstrap_value: tf.Tensor,
    log_rhos: tf.Tensor,
    lambda_: float | tf.Tensor = 1.0,
    rho_bar: float | tf.Tensor | None = 1.0,
    c_bar: float | tf.Tensor | None = 1.0,
) -> tuple[tf.Tensor, tf.Tensor]:
    """(value targets v_s, advantages A_s as in the module docstring), both [T, N] and constant;
    `log_rhos` = log pi - log b of the stored actions, `bootstrap_value` [N] = V(s_T)."""
    _, value_targets = vtrace(
        rewards, values, discounts, bootstrap_value, log_rhos, rho_bar, c_bar, lambda_
    )
    values, bootstrap_value = tf.stop_gradient(values), tf.stop_gradient(bootstrap_value)
    next_values = tf.concat([values[1:], bootstrap_value[None]], axis=0)
    next_targets = tf.concat([value_targets[1:], bootstrap_value[None]], axis=0)
    next_return = (1.0 - lambda_) * next_values + lambda_ * next_targets
    advantages = rewards + discounts * next_return - values
    return value_targets, tf.stop_gradient(advantages)


@register_gradient_function("offpac_actor_loss")
def offpac_actor_loss(
    log_prob: tf.Tensor,
    behaviour_log_prob: tf.Tensor,
    advantage: tf.Tensor,
    rho_bar: float | tf.Tensor | None = 1.0,
    mask: tf.Tensor | None = None,
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Returns (loss, mean untruncated rho, share of samples with rho > rho_bar) of
    -mean(min(rho_bar, pi/b) * A * log pi(a|s)); the gradient flows through `log_prob` only."""
    weights = truncated_importance_weights(log_prob, behaviour_log_prob, rho_bar)
    loss = -masked_mean(log_prob * tf.stop_gradient(weights * advantage), mask)
    rho = truncated_importance_weights(log_prob, behaviour_log_prob, None)
    clipped = tf.zeros_like(rho) if rho_bar is None else tf.cast(rho > rho_bar, rho.dtype)
    return loss, masked_mean(rho, mask), masked_mean(clipped, mask)
