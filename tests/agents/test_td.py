"""TD targets and losses checked against arithmetic done by hand."""

import numpy as np
import pytest
import tensorflow as tf

from rl.agents.gradient_functions import (
    double_q_learning_target,
    huber,
    q_learning_target,
    td_huber,
    td_mse,
)


def test_dqn_loss_on_a_two_sample_batch_by_hand():
    # Sample 0: r=1, discount=0.99, next Q_target=[2, 3] -> target = 1 + 0.99*3 = 3.97
    #           Q(s)=[1.0, 2.0], action 1 -> error = 3.97 - 2.0 = 1.97 -> huber = 1.97 - 0.5 = 1.47
    # Sample 1: r=0, discount=0 (terminated), target = 0
    #           Q(s)=[0.5, -1.0], action 0 -> error = -0.5 -> huber = 0.5*0.25 = 0.125
    # Mean loss = (1.47 + 0.125) / 2 = 0.7975
    reward = tf.constant([1.0, 0.0])
    discount = tf.constant([0.99, 0.0])
    next_q_target = tf.constant([[2.0, 3.0], [10.0, 20.0]])
    target = q_learning_target(reward, discount, next_q_target)
    np.testing.assert_allclose(target.numpy(), [3.97, 0.0], rtol=1e-6)
    q_values = tf.constant([[1.0, 2.0], [0.5, -1.0]])
    loss, td_error = td_huber(q_values, tf.constant([1, 0]), target)
    np.testing.assert_allclose(td_error.numpy(), [1.97, -0.5], rtol=1e-6)
    assert loss.numpy() == pytest.approx(0.7975, rel=1e-6)
    # MSE variant: (0.5*1.97^2 + 0.5*0.25) / 2 = (1.94045 + 0.125) / 2 = 1.032725
    mse, _ = td_mse(q_values, tf.constant([1, 0]), target)
    assert mse.numpy() == pytest.approx(1.032725, rel=1e-6)
    # Importance weights [0.5, 2]: (0.5*1.47 + 2*0.125) / 2 = (0.735 + 0.25) / 2 = 0.4925
    weighted, _ = td_huber(q_values, tf.constant([1, 0]), target, tf.constant([0.5, 2.0]))
    assert weighted.numpy() == pytest.approx(0.4925, rel=1e-6)


def test_double_q_target_uses_online_argmax_and_target_values():
    # Online prefers action 0 ([5, 1]); the target net values action 0 at 2 (not its max 7):
    # target = 1 + 0.9 * 2 = 2.8, where plain Q-learning would give 1 + 0.9 * 7 = 7.3.
    reward, discount = tf.constant([1.0]), tf.constant([0.9])
    next_q_target, next_q_online = tf.constant([[2.0, 7.0]]), tf.constant([[5.0, 1.0]])
    double = double_q_learning_target(reward, discount, next_q_target, next_q_online)
    assert double.numpy()[0] == pytest.approx(2.8)
    plain = q_learning_target(reward, discount, next_q_target)
    assert plain.numpy()[0] == pytest.approx(7.3)


def test_td_gradient_does_not_flow_into_the_target():
    q = tf.Variable([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        target = q_learning_target(tf.constant([0.0]), tf.constant([1.0]), q)  # depends on q
        loss, _ = td_mse(q, tf.constant([0]), target)
    # d/dq0 of 0.5 * (stop_grad(2) - q0)^2 = -(2 - 1) = -1; q1 only appears in the target.
    np.testing.assert_allclose(tape.gradient(loss, q).numpy(), [[-1.0, 0.0]])


def test_huber_matches_its_definition():
    errors = tf.constant([-3.0, -1.0, 0.0, 0.5, 2.0])
    np.testing.assert_allclose(huber(errors).numpy(), [2.5, 0.5, 0.0, 0.125, 1.5])
