"""QR-DQN: the quantile Huber loss and the target checked by hand, the agent's acting read
through the quantiles' mean, and the quantile regression's fixed point (the tau-quantiles)."""

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401  (fills the registries)
from rl import registry
from rl.agents.gradient_functions import (
    quantile_huber_loss,
    quantile_midpoints,
    quantile_q_values,
    quantile_target,
)
from rl.envs import make_vector_env


def test_midpoints_by_hand():
    # N = 4 slices of [0, 1]: midpoints 1/8, 3/8, 5/8, 7/8.
    np.testing.assert_allclose(quantile_midpoints(4).numpy(), [0.125, 0.375, 0.625, 0.875])


def test_quantile_huber_loss_by_hand():
    # N = 2: tau_hat = [0.25, 0.75]. Taken action 1 has quantiles theta = [0, 2]; the target
    # quantiles are T theta = [1, 3]. u_ij = T theta_j - theta_i; Huber (kappa 1): 0.5 u^2 for
    # |u| <= 1, |u| - 0.5 beyond.
    #   i = 0 (theta 0, tau 0.25): u = [1, 3], both >= 0 -> weight 0.25:
    #       0.25 * 0.5 = 0.125, 0.25 * 2.5 = 0.625 -> mean over j 0.375;
    #   i = 1 (theta 2, tau 0.75): u = [-1, 1]: u < 0 -> weight |0.75 - 1| = 0.25 -> 0.125;
    #       u >= 0 -> weight 0.75 -> 0.375; mean over j 0.25.
    # Per-sample loss: sum over i = 0.375 + 0.25 = 0.625; IS weight 2 -> loss 1.25.
    quantiles = tf.constant([[[9.0, 9.0], [0.0, 2.0]]])  # action 0's values must not matter
    action, target = tf.constant([1]), tf.constant([[1.0, 3.0]])
    loss, per_sample = quantile_huber_loss(quantiles, action, target, tf.constant([2.0]))
    assert per_sample.numpy() == pytest.approx([0.625])
    assert float(loss) == pytest.approx(1.25)
    # kappa = 2: Huber_2(u) = 0.5 u^2 for |u| <= 2, 2 (|u| - 1) beyond; then divided by 2.
    #   i = 0: u = 1 -> 0.5 / 2 = 0.25, * 0.25 = 0.0625; u = 3 -> 2 * 2 / 2 = 2, * 0.25 = 0.5;
    #          mean 0.28125;
    #   i = 1: u = -1 -> 0.25 * 0.25 = 0.0625; u = 1 -> 0.25 * 0.75 = 0.1875; mean 0.125.
    # Sum 0.40625 (no weights: the mean over the batch of one).
    loss, per_sample = quantile_huber_loss(quantiles, action, target, None, kappa=2.0)
    assert per_sample.numpy() == pytest.approx([0.40625])
    assert float(loss) == pytest.approx(0.40625)


def test_quantile_loss_gradient_by_hand():
    # With |u| <= kappa the gradient of rho w.r.t. theta_i is -|tau - 1{u<0}| * u / N' per j.
    # theta = [0, 2], T theta = [1, 3] as above:
    #   d/d theta_0 = -(0.25 * 1 + 0.25 * 3 -> Huber slope 1 beyond kappa: 0.25 * 1) / 2
    #               = -(0.25 + 0.25) / 2 = -0.25;
    #   d/d theta_1 = -(0.25 * -1 + 0.75 * 1) / 2 = -0.25.
    theta = tf.Variable([[[0.0, 2.0]]])
    with tf.GradientTape() as tape:
        loss, _ = quantile_huber_loss(theta, tf.constant([0]), tf.constant([[1.0, 3.0]]))
    np.testing.assert_allclose(tape.gradient(loss, theta).numpy(), [[[-0.25, -0.25]]])


def test_target_by_hand():
    # next quantiles of the target net: action 0 -> [1, 3] (mean 2), action 1 -> [0, 10]
    # (mean 5). Policy Q picks a* = 1 -> T theta = r + discount * [0, 10] = 1 + 0.5 * [0, 10];
    # at termination (discount 0) every target quantile is r.
    next_quantiles = tf.constant([[[1.0, 3.0], [0.0, 10.0]]] * 2)
    next_q = quantile_q_values(next_quantiles)
    np.testing.assert_allclose(next_q.numpy(), [[2.0, 5.0]] * 2)
    target = quantile_target(
        tf.constant([1.0, 1.0]), tf.constant([0.5, 0.0]), next_quantiles, next_q
    )
    np.testing.assert_allclose(target.numpy(), [[1.0, 6.0], [1.0, 1.0]])
    # Another policy (e.g. double Q's online net) preferring action 0: 1 + 0.5 * [1, 3].
    other = quantile_target(
        tf.constant([1.0]), tf.constant([0.5]), next_quantiles[:1], tf.constant([[1.0, 0.0]])
    )
    np.testing.assert_allclose(other.numpy(), [[1.5, 2.5]])


def test_minimising_the_loss_finds_the_tau_quantiles():
    # Targets 0..99 (uniform): the minimiser of sum_i rho_{tau_i} is each tau_i-quantile.
    # With N = 4 (tau 0.125 ... 0.875) those lie near 12.4, 37.1, 61.9, 86.6 (kappa = 1 shifts
    # them by less than one sample).
    targets = tf.constant(np.arange(100, dtype=np.float32)[None, :])
    theta = tf.Variable(tf.fill([1, 1, 4], 50.0))
    optimizer = tf.keras.optimizers.SGD(50.0)

    @tf.function  # one compiled step: 400 eager steps take seconds on a busy machine
    def step():
        with tf.GradientTape() as tape:
            loss, _ = quantile_huber_loss(theta, tf.constant([0]), targets)
        optimizer.apply_gradients([(tape.gradient(loss, theta), theta)])

    for _ in range(400):
        step()
    np.testing.assert_allclose(theta.numpy()[0, 0], [12.4, 37.1, 61.9, 86.6], atol=1.0)


def test_agent_acts_on_the_mean_of_its_quantiles_and_learns():
    hp = registry.get_hparams("qrdqn_tiny")()
    hp.freeze()
    env, spec = make_vector_env("CartPole-v1", 1, seed=0)
    agent = registry.get_agent("qrdqn")(spec, hp, seed=0)
    obs = np.random.default_rng(0).normal(size=[3, *spec.obs_shape]).astype(np.float32)
    quantiles = agent.q_network(obs, noisy=False)
    assert quantiles.shape == [3, spec.num_actions, hp.num_quantiles]
    expected = np.argmax(quantiles.numpy().mean(axis=-1), axis=-1)
    np.testing.assert_array_equal(agent.greedy_actions(obs), expected)
    # One compiled update on a hand-made batch: the per-sample loss comes back as td_error.
    batch = {
        "obs": tf.zeros([1, 4, 4]),
        "action": tf.constant([[0, 1, 0, 1]], tf.int64),
        "reward": tf.ones([1, 4]),
        "next_obs": tf.zeros([1, 4, 4]),
        "discount": tf.constant([[0.99, 0.99, 0.0, 0.0]]),
        "weights": tf.ones([1, 4]),
    }
    out = agent.learner_step(batch)
    assert out["td_error"].shape == [1, 4]
    assert np.all(out["td_error"].numpy() > 0) and np.isfinite(float(out["loss"]))
    env.close()


def test_wrong_loss_role_is_refused():
    from rl.agents.function_slots import check_function_slots
    from rl.errors import UserError

    hp = registry.get_hparams("qrdqn_tiny")()
    hp.loss = "categorical_loss"
    with pytest.raises(UserError, match="quantile_loss"):
        check_function_slots(registry.get_agent("qrdqn"), hp)
