"""IMPALA's actor-critic loss on V-trace targets, as a pure function.

Espeholt et al. 2018, https://arxiv.org/abs/1802.01561, section 4.2, as a loss to minimize with
means instead of the paper's sums (A, v: the V-trace advantages and targets, constants):

    loss = -mean(log pi(a|x) A) + vf_coef * 0.5 mean((V(x) - v)^2) - ent_coef * mean(H(pi(.|x)))
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.gradient_functions.policy_gradient import (
    entropy_bonus,
    policy_gradient_loss,
    value_loss,
)
from rl.registry import register_gradient_function
from rl.types import LossAndAux


@register_gradient_function("impala_loss")
def impala_loss(
    log_prob: tf.Tensor,
    entropy: tf.Tensor,
    value: tf.Tensor,
    pg_advantage: tf.Tensor,
    vs: tf.Tensor,
    vf_coef: float,
    ent_coef: float,
    mask: tf.Tensor | None = None,
) -> LossAndAux:
    """(loss, {"policy_loss", "value_loss", "entropy"}) of equal-shape inputs and `mask`."""
    policy = policy_gradient_loss(log_prob, pg_advantage, mask)
    critic = value_loss(value, vs, mask=mask)
    bonus = entropy_bonus(entropy, mask)
    loss = policy + vf_coef * critic - ent_coef * bonus
    return loss, {"policy_loss": policy, "value_loss": critic, "entropy": bonus}
