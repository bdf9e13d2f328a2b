"""Temporal-difference targets and losses for value-based agents, as pure functions.

Double Q-learning target from van Hasselt et al. 2015, https://arxiv.org/abs/1509.06461: the
online network picks the next action, the target network evaluates it.
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from rl.registry import register_gradient_function


@register_gradient_function("q_learning_target")
def q_learning_target(
    reward: tf.Tensor, discount: tf.Tensor, next_q_target: tf.Tensor
) -> tf.Tensor:
    """r + discount * max_a Q_target(s', a). `discount` is 0 at termination, gamma^n else."""
    return reward + discount * tf.reduce_max(next_q_target, axis=-1)


@register_gradient_function("double_q_learning_target")
def double_q_learning_target(
    reward: tf.Tensor, discount: tf.Tensor, next_q_target: tf.Tensor, next_q_online: tf.Tensor
) -> tf.Tensor:
    """r + discount * Q_target(s', argmax_a Q_online(s', a))."""
    next_action = tf.argmax(next_q_online, axis=-1, output_type=tf.int64)
    return reward + discount * tf.gather(next_q_target, next_action, axis=-1, batch_dims=1)


def huber(error: tf.Tensor, delta: float | tf.Tensor = 1.0) -> tf.Tensor:
    """Elementwise Huber: 0.5 e^2 for |e| <= delta, delta (|e| - 0.5 delta) beyond."""
    abs_error = tf.abs(error)
    quadratic = tf.minimum(abs_error, delta)
    return 0.5 * tf.square(quadratic) + delta * (abs_error - quadratic)


def squared(error: tf.Tensor) -> tf.Tensor:
    """Elementwise 0.5 e^2 (so its gradient is the error itself)."""
    return 0.5 * tf.square(error)


def weighted_td_loss(
    q_values: tf.Tensor,
    action: tf.Tensor,
    td_target: tf.Tensor,
    weights: tf.Tensor | None,
    elementwise: Callable[[tf.Tensor], tf.Tensor],
) -> tuple[tf.Tensor, tf.Tensor]:
    """(weighted mean of `elementwise`(td_error), td_error): the body of the "td_loss" functions."""
    q_taken = tf.gather(q_values, tf.cast(action, tf.int64), axis=-1, batch_dims=1)
    td_error = tf.stop_gradient(td_target) - q_taken
    per_sample = elementwise(td_error)
    if weights is not None:
        per_sample = per_sample * weights
    return tf.reduce_mean(per_sample), td_error


@register_gradient_function("td_huber", role="td_loss")
def td_huber(
    q_values: tf.Tensor, action: tf.Tensor, td_target: tf.Tensor, weights: tf.Tensor | None = None
) -> tuple[tf.Tensor, tf.Tensor]:
    """Huber TD loss (delta 1), DQN's default: the gradient of a large error is clipped to 1."""
    return weighted_td_loss(q_values, action, td_target, weights, huber)


@register_gradient_function("td_mse", role="td_loss")
def td_mse(
    q_values: tf.Tensor, action: tf.Tensor, td_target: tf.Tensor, weights: tf.Tensor | None = None
) -> tuple[tf.Tensor, tf.Tensor]:
    """Squared TD loss, mean of 0.5 td_error^2: the gradient grows with the error."""
    return weighted_td_loss(q_values, action, td_target, weights, squared)
