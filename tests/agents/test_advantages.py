"""Discounted returns and GAE against arithmetic done by hand, termination vs truncation."""

import numpy as np
import pytest
import tensorflow as tf

from rl import registry
from rl.agents.advantage_estimators import gae
from rl.rollout.returns import discounted_returns, episode_discounts, fold_truncation

F = np.float32


def test_registered_by_name():
    assert registry.get_advantage_estimator("gae") is gae
    assert registry.get_advantage_estimator("discounted_returns") is discounted_returns


def test_discounted_returns_by_hand_with_termination_and_truncation():
    gamma = 0.5
    # T=3 steps (rows), N=3 envs (columns). Env 0 runs on; env 1 terminates at t=1; env 2 is
    # truncated at t=1 with V(final_obs) = 8. Bootstrap V(s_3) = [4, 10, 10].
    rewards = tf.constant([[1, 1, 1], [2, 1, 1], [3, 1, 1]], tf.float32)
    terminated = tf.constant(np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]], bool))
    truncated = tf.constant(np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0]], bool))
    final_values = tf.constant([[0, 0, 0], [0, 99, 8], [0, 0, 0]], tf.float32)
    values = tf.zeros([3, 3])
    bootstrap = tf.constant([4, 10, 10], tf.float32)
    rewards = fold_truncation(rewards, truncated, final_values, gamma)
    discounts = episode_discounts(terminated, truncated, gamma)
    np.testing.assert_allclose(discounts, [[0.5] * 3, [0.5, 0, 0], [0.5] * 3])
    advantages, returns = discounted_returns(rewards, values, discounts, bootstrap)
    # Env 0: G2 = 3 + 0.5*4 = 5, G1 = 2 + 0.5*5 = 4.5, G0 = 1 + 0.5*4.5 = 3.25.
    # Env 1 (terminated at 1; its final value 99 is ignored): G2 = 1 + 0.5*10 = 6, G1 = 1,
    #   G0 = 1 + 0.5*1 = 1.5.
    # Env 2 (truncated at 1): G1 = 1 + 0.5*V(final) = 1 + 4 = 5, G0 = 1 + 0.5*5 = 3.5, G2 = 6.
    expected = [[3.25, 1.5, 3.5], [4.5, 1.0, 5.0], [5.0, 6.0, 6.0]]
    np.testing.assert_allclose(returns, expected, rtol=1e-6)
    np.testing.assert_allclose(advantages, expected, rtol=1e-6)  # V = 0
    _, with_values = discounted_returns(rewards, tf.ones([3, 3]), discounts, bootstrap)
    np.testing.assert_allclose(with_values, expected, rtol=1e-6)  # returns do not use V(s_t)


def test_gae_by_hand_running_terminated_truncated():
    gamma, lam = 0.5, 0.5
    # N=3 envs with the same rewards 1 and values 2, bootstrap 4. Env 0 runs on, env 1
    # terminates at t=1, env 2 is truncated at t=1 with V(final_obs) = 6.
    rewards = tf.ones([3, 3])
    values = tf.fill([3, 3], 2.0)
    terminated = tf.constant(np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]], bool))
    truncated = tf.constant(np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0]], bool))
    final_values = tf.constant([[0, 0, 0], [0, 0, 6], [0, 0, 0]], tf.float32)
    rewards = fold_truncation(rewards, truncated, final_values, gamma)
    discounts = episode_discounts(terminated, truncated, gamma)
    advantages, returns = gae(rewards, values, discounts, tf.fill([3], 4.0), lambda_=lam)
    # Env 0: deltas d0 = 1 + 0.5*2 - 2 = 0, d1 = 0, d2 = 1 + 0.5*4 - 2 = 1;
    #   A2 = 1, A1 = 0 + 0.25*1 = 0.25, A0 = 0 + 0.25*0.25 = 0.0625.
    # Env 1: d1 = 1 + 0 - 2 = -1 (no value after termination), d2 = 1, d0 = 0;
    #   A2 = 1, A1 = -1 (the trace stops at the end), A0 = 0.25*(-1) = -0.25.
    # Env 2: folded r1 = 1 + 0.5*6 = 4, d1 = 4 - 2 = 2; A2 = 1, A1 = 2, A0 = 0.25*2 = 0.5.
    expected = [[0.0625, -0.25, 0.5], [0.25, -1.0, 2.0], [1.0, 1.0, 1.0]]
    np.testing.assert_allclose(advantages, expected, rtol=1e-6)
    np.testing.assert_allclose(returns, np.array(expected) + 2.0, rtol=1e-6)


def test_gae_lambda_one_is_returns_minus_values_and_zero_is_td_error():
    rng = np.random.default_rng(0)
    rewards = tf.constant(rng.normal(size=(6, 4)), tf.float32)
    values = tf.constant(rng.normal(size=(6, 4)), tf.float32)
    discounts = tf.constant(0.9 * (rng.random((6, 4)) > 0.2), tf.float32)
    bootstrap = tf.constant(rng.normal(size=4), tf.float32)
    advantages, _ = gae(rewards, values, discounts, bootstrap, lambda_=1.0)
    mc_advantages, _ = discounted_returns(rewards, values, discounts, bootstrap)
    np.testing.assert_allclose(advantages, mc_advantages, rtol=1e-5, atol=1e-5)
    td, _ = gae(rewards, values, discounts, bootstrap, lambda_=0.0)
    next_values = np.concatenate([values.numpy()[1:], bootstrap.numpy()[None]])
    expected = rewards.numpy() + discounts.numpy() * next_values - values.numpy()
    np.testing.assert_allclose(td, expected, rtol=1e-5, atol=1e-6)


def test_estimators_compile_with_xla():
    fn = tf.function(lambda r, v, d, b: gae(r, v, d, b, lambda_=0.9)[0], jit_compile=True)
    out = fn(tf.ones([4, 2]), tf.zeros([4, 2]), tf.fill([4, 2], 0.5), tf.zeros([2]))
    # lambda*gamma-discounted sum of deltas 1 + 0.5*0 - 0 = 1: A3 = 1, A2 = 1 + 0.45 = 1.45.
    assert out.numpy()[2, 0] == pytest.approx(1.45)
