"""Categorical (C51) distributional RL: the projected Bellman target and its loss.

Bellemare, Dabney & Munos 2017, "A Distributional Perspective on Reinforcement Learning",
https://arxiv.org/abs/1707.06887 (Algorithm 1); n-step, double-Q and priorities as in Rainbow
(https://arxiv.org/abs/1710.02298).

The projection of Tz_j = clip(r + discount * z_j, v_min, v_max) onto the support is written as
a triangular kernel, m_i = sum_j [1 - |Tz_j - z_i| / dz]_0^1 p_j (as Dopamine does): the
paper's floor/ceil bookkeeping without a scatter (dense [B, N, N] ops, fine for XLA and TPUs)
or a special case for Tz_j landing exactly on an atom.
"""

from __future__ import annotations

import tensorflow as tf

from rl.registry import register_gradient_function


def categorical_support(v_min: float, v_max: float, num_atoms: int) -> tf.Tensor:
    """The atoms z_0 = v_min < ... < z_{N-1} = v_max, evenly spaced ([N] float32)."""
    return tf.linspace(tf.constant(v_min, tf.float32), tf.constant(v_max, tf.float32), num_atoms)


@register_gradient_function("categorical_q_values")
def categorical_q_values(logits: tf.Tensor, support: tf.Tensor) -> tf.Tensor:
    """Q(s, a) = sum_i p_i(s, a) z_i, each action's mean return: [B, A, N] -> [B, A]."""
    return tf.reduce_sum(tf.nn.softmax(logits, axis=-1) * support, axis=-1)


@register_gradient_function("categorical_projection")
def categorical_projection(
    reward: tf.Tensor, discount: tf.Tensor, next_probs: tf.Tensor, support: tf.Tensor
) -> tf.Tensor:
    """Projects r + discount * Z(s', a*) (next_probs [B, N]) on `support` [N]: [B, N], constant."""
    v_min, v_max = support[0], support[-1]
    delta = support[1] - support[0]
    target_atoms = tf.clip_by_value(
        reward[:, None] + discount[:, None] * support[None, :], v_min, v_max
    )  # [B, N_j]
    # kernel[b, i, j]: the share of source atom j's mass that lands on support atom i.
    distance = tf.abs(target_atoms[:, None, :] - support[None, :, None])
    kernel = tf.clip_by_value(1.0 - distance / delta, 0.0, 1.0)
    return tf.stop_gradient(tf.reduce_sum(kernel * next_probs[:, None, :], axis=-1))


@register_gradient_function("categorical_target")
def categorical_target(
    reward: tf.Tensor,
    discount: tf.Tensor,
    next_logits_target: tf.Tensor,
    next_q_policy: tf.Tensor,
    support: tf.Tensor,
) -> tf.Tensor:
    """The projected target [B, N] for a* = argmax_a next_q_policy(s', a) ([B, A]: the online net's
    mean Q for double Q, else the target net's), evaluated by the target net ([B, A, N])."""
    next_action = tf.argmax(next_q_policy, axis=-1, output_type=tf.int64)
    next_logits = tf.gather(next_logits_target, next_action, axis=1, batch_dims=1)  # [B, N]
    return categorical_projection(reward, discount, tf.nn.softmax(next_logits, -1), support)


@register_gradient_function("categorical_loss", role="distributional_loss")
def categorical_loss(
    logits: tf.Tensor, action: tf.Tensor, target_probs: tf.Tensor, weights: tf.Tensor | None = None
) -> tuple[tf.Tensor, tf.Tensor]:
    """Cross-entropy of the taken action's distribution against the target: (weighted mean,
    per-sample loss [B]); the unweighted per-sample loss is Rainbow's replay priority."""
    taken = tf.gather(logits, tf.cast(action, tf.int64), axis=1, batch_dims=1)  # [B, N]
    per_sample = -tf.reduce_sum(
        tf.stop_gradient(target_probs) * tf.nn.log_softmax(taken, axis=-1), axis=-1
    )
    weighted = per_sample if weights is None else per_sample * weights
    return tf.reduce_mean(weighted), per_sample
