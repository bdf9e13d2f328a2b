"""Off-policy actor-critic (Off-PAC) losses: truncated importance weights, the critic's
off-policy target and the importance-weighted actor loss, as pure functions.

Degris, White & Sutton 2012, "Off-Policy Actor-Critic", ICML, https://arxiv.org/abs/1205.4839.
The paper's notation, mapped to the arguments here:

    b(a|s)            behaviour policy            -> `behaviour_log_prob` = log b(a_t|s_t)
    pi_u(a|s)         target policy (the actor)   -> `log_prob` = log pi(a_t|s_t), current weights
    rho_t = pi/b      importance ratio            -> exp(log_prob - behaviour_log_prob)
    V_v(s)            critic                      -> `values`, `bootstrap_value`
    gamma, lambda     discount, trace decay       -> `discounts` (0 at episode ends), `lambda_`
    delta_t           TD error r + gamma V(s') - V(s)
    psi(s, a)         grad log pi(a|s)            -> the gradient of `log_prob`

Critic. The paper learns V^pi with GTD(lambda), whose eligibility trace e <- rho_t (x_t +
gamma lambda e) is the backward view of the per-decision importance-sampled lambda-return. Its
convergence argument is for linear features (plus a second weight vector w); with a neural
critic we use the forward view of the same target with truncated weights, the V-trace target
(Espeholt et al. 2018, https://arxiv.org/abs/1802.01561, eq. 1; Retrace's c_t = lambda min(c_bar,
rho_t), Munos et al. 2016, https://arxiv.org/abs/1606.02647):

    v_s = V(s_s) + sum_{t>=s} gamma^{t-s} (prod_{i=s}^{t-1} c_i) min(rho_bar, rho_t) delta_t.

With rho_bar = c_bar = inf it is exactly the paper's importance-sampled lambda-return (unbiased,
unbounded variance); truncating at 1 bounds the variance, at the price of v_s estimating the
value of a policy between b and pi when pi/b > 1. The recursion is the shared V-trace estimator
(`rl.agents.advantage_estimators.vtrace`).

Actor. The paper's actor follows grad J ~ E_b[rho_t psi(s_t, a_t) (R^lambda_t - V(s_t))]
(eligibility e_u <- rho_t (psi_t + gamma lambda e_u)), where the off-policy lambda-return
R^lambda_t = r_t + gamma ((1 - lambda) V(s_{t+1}) + lambda (importance-corrected return from
t+1)); with lambda = 0 that is rho_t psi_t delta_t. Here the weight is truncated and the
corrected return from t+1 is the critic's target v_{t+1}:

    A_t = r_t + gamma ((1 - lambda) V(s_{t+1}) + lambda v_{t+1}) - V(s_t),
    actor loss = -mean(min(rho_bar, rho_t) A_t log pi(a_t|s_t))   (weights and A constant).

lambda = 0 gives the paper's TD-error actor (A_t = delta_t); lambda = 1 IMPALA's policy gradient
(A_t = r_t + gamma v_{t+1} - V(s_t), Espeholt et al. 2018, section 4.2).

Episode ends follow `rl.rollout.returns`: truncation folded into the rewards
(r_t + gamma V(final_obs_t)), discounts 0 at every end, so neither traces nor bootstraps cross.
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
    """Returns (value targets v_s, advantages A_s = r_s + discount_s ((1 - lambda) V(s_{s+1}) +
    lambda v_{s+1}) - V(s_s)), both [T, N] and constant. Time-major inputs as in the module
    docstring; `log_rhos` = log pi - log b of the stored actions; `bootstrap_value` [N] = V(s_T)
    (v_T = V(s_T))."""
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
