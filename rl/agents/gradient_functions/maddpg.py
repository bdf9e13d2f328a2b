"""Losses of MADDPG (multi-agent DDPG with centralized critics), as pure functions.

Lowe et al. 2017, https://arxiv.org/abs/1706.02275 (Algorithm 1). Actions are [B, N, A] (row i =
agent i); critic i sees every agent's observation and action, its outputs stacked as [N, B].
`reward` is the team's [B] or per agent [N, B].
"""

from __future__ import annotations

import tensorflow as tf

from rl.registry import register_gradient_function


@register_gradient_function("maddpg_critic_target")
def maddpg_critic_target(
    reward: tf.Tensor, discount: tf.Tensor, next_q_targets: tf.Tensor
) -> tf.Tensor:
    """y_i = r + discount * Q'_i(x', mu'_1(o'_1), ..., mu'_N(o'_N)) for every agent i: [N, B]; a [B]
    reward is the team's and broadcasts over agents."""
    return reward + discount[None, :] * next_q_targets


@register_gradient_function("maddpg_critic_loss")
def maddpg_critic_loss(
    q_values: tf.Tensor, td_target: tf.Tensor, weights: tf.Tensor | None = None
) -> tuple[tf.Tensor, tf.Tensor]:
    """sum_i mean_b w_b * 0.5 (y_ib - Q_i(x_b, a_b))^2: (loss, td_error [N, B]). The critics'
    parameters are disjoint, so critic i's gradient is its own loss's."""
    td_error = tf.stop_gradient(td_target) - q_values
    per_sample = 0.5 * tf.square(td_error)
    if weights is not None:
        per_sample = per_sample * weights[None, :]
    return tf.reduce_sum(tf.reduce_mean(per_sample, axis=-1)), td_error


@register_gradient_function("maddpg_joint_actions")
def maddpg_joint_actions(buffer_actions: tf.Tensor, policy_actions: tf.Tensor) -> tf.Tensor:
    """[N, B, N, A]: entry i is the replayed joint action with agent i's slot replaced by mu_i(o_i)
    (MADDPG's a_j = a_j^(sample) for j != i); gradients flow only through that slot."""
    num_agents = tf.shape(buffer_actions)[1]
    own = tf.eye(num_agents, dtype=buffer_actions.dtype)[:, None, :, None]  # [N, 1, N, 1]
    return own * policy_actions[None] + (1.0 - own) * buffer_actions[None]


@register_gradient_function("maddpg_actor_loss")
def maddpg_actor_loss(q_of_own_policy_action: tf.Tensor) -> tf.Tensor:
    """sum_i -mean_b Q_i(x_b, a_1b, ..., mu_i(o_ib), ..., a_Nb); each term depends on actor i only,
    so the sum's gradient for actor i is agent i's policy gradient."""
    return -tf.reduce_sum(tf.reduce_mean(q_of_own_policy_action, axis=-1))
