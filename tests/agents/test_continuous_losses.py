"""DDPG/TD3/SAC losses, the squashed Gaussian and the exploration noises, checked by hand."""

import math

import numpy as np
import pytest
import tensorflow as tf

from rl.agents.action_functions import gaussian_noise, ornstein_uhlenbeck, ornstein_uhlenbeck_step
from rl.agents.gradient_functions import (
    clipped_double_q_target,
    critic_loss,
    deterministic_actor_loss,
    log_one_minus_tanh_squared,
    sac_actor_loss,
    sac_alpha_loss,
    smoothed_target_action,
    soft_q_target,
    squashed_gaussian,
    squashed_gaussian_sample,
)


def test_td3_target_smoothing_clips_the_noise_then_the_action():
    # mu'(s') = [0.9, -0.2], injected noise [0.7, -0.1], noise clip 0.5:
    # clipped noise [0.5, -0.1] -> [1.4, -0.3] -> clipped to the bounds [-1, 1] -> [1.0, -0.3].
    action = smoothed_target_action(
        tf.constant([[0.9, -0.2]]), tf.constant([[0.7, -0.1]]), 0.5, -1.0, 1.0
    )
    np.testing.assert_allclose(action.numpy(), [[1.0, -0.3]], rtol=1e-6)
    # Noise -0.7 is clipped to -0.5: 0.9 - 0.5 = 0.4 (inside the bounds).
    action = smoothed_target_action(tf.constant([[0.9]]), tf.constant([[-0.7]]), 0.5, -1.0, 1.0)
    np.testing.assert_allclose(action.numpy(), [[0.4]], rtol=1e-6)
    # DDPG: noise clip 0 leaves the target action as it is.
    action = smoothed_target_action(tf.constant([[0.9]]), tf.constant([[0.7]]), 0.0, -1.0, 1.0)
    np.testing.assert_allclose(action.numpy(), [[0.9]], rtol=1e-6)


def test_clipped_double_q_target_takes_the_min_over_critics():
    # Q'_1(s', a') = [3, 4], Q'_2 = [5, 1] -> min [3, 1]. Rewards [1, 2], discount [0.99, 0]
    # (the second transition terminated): targets [1 + 0.99 * 3, 2 + 0 * 1] = [3.97, 2].
    target = clipped_double_q_target(
        tf.constant([1.0, 2.0]), tf.constant([0.99, 0.0]), tf.constant([[3.0, 4.0], [5.0, 1.0]])
    )
    np.testing.assert_allclose(target.numpy(), [3.97, 2.0], rtol=1e-6)
    # One critic (DDPG): the plain target 1 + 0.99 * 3 = 3.97, 2 + 0 = 2.
    single = clipped_double_q_target(
        tf.constant([1.0, 2.0]), tf.constant([0.99, 0.0]), tf.constant([[3.0, 4.0]])
    )
    np.testing.assert_allclose(single.numpy(), [3.97, 2.0], rtol=1e-6)


def test_critic_loss_sums_critics_and_applies_is_weights():
    # Target y = [2, 2]; Q_1 = [1, 2], Q_2 = [3, 0] -> td errors y - Q = [[1, 0], [-1, 2]];
    # 0.5 e^2 = [[0.5, 0], [0.5, 2]]; IS weights [1, 0.5] -> [[0.5, 0], [0.5, 1]];
    # mean over the batch per critic [0.25, 0.75]; summed over critics: 1.0.
    q_values = tf.constant([[1.0, 2.0], [3.0, 0.0]])
    loss, td_error = critic_loss(q_values, tf.constant([2.0, 2.0]), tf.constant([1.0, 0.5]))
    assert float(loss) == pytest.approx(1.0)
    np.testing.assert_allclose(td_error.numpy(), [[1.0, 0.0], [-1.0, 2.0]])
    # Without weights: means [0.25, 1.25] -> 1.5.
    loss, _ = critic_loss(q_values, tf.constant([2.0, 2.0]))
    assert float(loss) == pytest.approx(1.5)


def test_critic_loss_does_not_differentiate_through_the_target():
    q_values = tf.Variable([[1.0]])
    target = tf.Variable([3.0])
    with tf.GradientTape() as tape:
        loss, _ = critic_loss(q_values, target * 1.0)
    grad_q, grad_target = tape.gradient(loss, [q_values, target])
    # d/dQ 0.5 (y - Q)^2 = -(y - Q) = -2; the target gets none.
    np.testing.assert_allclose(grad_q.numpy(), [[-2.0]])
    assert grad_target is None


def test_deterministic_actor_loss_is_minus_mean_q():
    # -(1 + 3) / 2 = -2.
    assert float(deterministic_actor_loss(tf.constant([1.0, 3.0]))) == pytest.approx(-2.0)


def test_sac_soft_target_subtracts_the_entropy_term():
    # min(Q'_1, Q'_2) = min(2, 3) = 2; alpha * log pi = 0.2 * -1.5 = -0.3, so the soft value is
    # 2 - (-0.3) = 2.3; target = r + discount * 2.3 = 1 + 0.5 * 2.3 = 2.15.
    target = soft_q_target(
        tf.constant([1.0]),
        tf.constant([0.5]),
        tf.constant([[2.0], [3.0]]),
        tf.constant([-1.5]),
        0.2,
    )
    np.testing.assert_allclose(target.numpy(), [2.15], rtol=1e-6)
    # Terminal transition: no bootstrap, no entropy bonus: target = r = 1.
    terminal = soft_q_target(
        tf.constant([1.0]),
        tf.constant([0.0]),
        tf.constant([[2.0], [3.0]]),
        tf.constant([-1.5]),
        0.2,
    )
    np.testing.assert_allclose(terminal.numpy(), [1.0])


def test_sac_actor_loss_by_hand():
    # Q_1 = [1, 2], Q_2 = [3, 0] -> min [1, 0]; log pi = [-1, 0.5]; alpha = 0.1:
    # [0.1 * -1 - 1, 0.1 * 0.5 - 0] = [-1.1, 0.05] -> mean -0.525.
    loss = sac_actor_loss(
        tf.constant([[1.0, 2.0], [3.0, 0.0]]), tf.constant([-1.0, 0.5]), tf.constant(0.1)
    )
    assert float(loss) == pytest.approx(-0.525)


def test_sac_alpha_loss_and_its_gradient_direction():
    # log alpha = log 0.5 = -0.693147; log pi = [-1, 0.5], target entropy -1:
    # log pi + target = [-2, -0.5], mean -1.25; loss = -(-0.693147 * -1.25) = -0.866434.
    log_alpha = tf.Variable(math.log(0.5))
    log_prob = tf.constant([-1.0, 0.5])
    with tf.GradientTape() as tape:
        loss = sac_alpha_loss(log_alpha, log_prob, target_entropy=-1.0)
    assert float(loss) == pytest.approx(-0.866434, abs=1e-5)
    # d loss / d log alpha = -mean(log pi + target) = 1.25 > 0: the policy's entropy
    # -mean(log pi) = 0.25 is above the target -1, so gradient descent lowers alpha.
    assert float(tape.gradient(loss, log_alpha)) == pytest.approx(1.25)


def test_log_one_minus_tanh_squared_is_exact_and_finite():
    u = tf.constant([-3.0, -0.5, 0.0, 0.7, 2.0], tf.float64)
    expected = np.log(1.0 - np.tanh(u.numpy()) ** 2)
    np.testing.assert_allclose(log_one_minus_tanh_squared(u).numpy(), expected, rtol=1e-12)
    # float32 tanh(20) rounds to 1: the naive form is log(0) = -inf, the stable one is
    # 2 (log 2 - 20 - softplus(-40)) = 2 * (0.693147 - 20) = -38.6137.
    big = log_one_minus_tanh_squared(tf.constant([20.0]))
    assert np.isfinite(big.numpy()).all()
    assert float(big[0]) == pytest.approx(-38.6137, abs=1e-3)


def test_squashed_gaussian_log_prob_by_hand():
    # u = mean + std * noise = 0.3 + 0.5 * 0.8 = 0.7; bounds [-2, 2] -> scale 2, center 0.
    # log N(u; 0.3, 0.5) = -0.5 * 0.8^2 - log 0.5 - 0.5 log(2 pi) = -0.545791;
    # tanh(0.7) = 0.604368, log(1 - 0.604368^2) = log(0.634740) = -0.454540; log scale = 0.693147;
    # log pi(a) = -0.545791 - (-0.454540 + 0.693147) = -0.784398; a = 2 * 0.604368 = 1.208736.
    action, log_prob = squashed_gaussian_sample(
        tf.constant([[0.3]]),
        tf.constant([[math.log(0.5)]]),
        tf.constant([[0.8]]),
        tf.constant([-2.0]),
        tf.constant([2.0]),
    )
    np.testing.assert_allclose(action.numpy(), [[1.208736]], rtol=1e-5)
    np.testing.assert_allclose(log_prob.numpy(), [-0.784398], rtol=1e-5)


def test_squashed_gaussian_log_prob_matches_change_of_variables_and_tfp():
    # Two action dims with different bounds; the density of a = c + s tanh(u) is
    # N(u) / |da/du|, with da/du from central finite differences (independent of the formula).
    mean = np.array([[0.2, -1.0]])
    log_std = np.array([[-0.3, 0.4]])
    noise = np.array([[1.1, -0.6]])
    low, high = np.array([-1.0, 0.0]), np.array([1.0, 3.0])
    action, log_prob = squashed_gaussian_sample(
        *(tf.constant(x, tf.float64) for x in (mean, log_std, noise, low, high))
    )
    std = np.exp(log_std)
    u = mean + std * noise
    center, scale = (high + low) / 2, (high - low) / 2
    squash = lambda x: center + scale * np.tanh(x)  # noqa: E731
    h = 1e-6
    jacobian = (squash(u + h) - squash(u - h)) / (2 * h)
    log_normal = -0.5 * noise**2 - np.log(std) - 0.5 * np.log(2 * np.pi)
    numeric = np.sum(log_normal - np.log(jacobian), axis=-1)
    np.testing.assert_allclose(action.numpy(), squash(u), rtol=1e-12)
    np.testing.assert_allclose(log_prob.numpy(), numeric, rtol=1e-6)
    # The tfp TransformedDistribution (Tanh, Scale, Shift bijectors) gives the same value.
    dist = squashed_gaussian(
        tf.constant(mean), tf.constant(std), tf.constant(low), tf.constant(high)
    )
    np.testing.assert_allclose(dist.log_prob(action).numpy(), numeric, rtol=1e-6)


def test_ornstein_uhlenbeck_one_step_by_hand():
    # x = 0.5, z = 1, theta 0.15, sigma 0.2, dt 1: 0.5 - 0.15 * 0.5 + 0.2 * 1 = 0.625.
    # dt = 0.01: 0.5 - 0.15 * 0.5 * 0.01 + 0.2 * 0.1 * 1 = 0.51925.
    x, z = tf.constant([0.5]), tf.constant([1.0])
    assert float(ornstein_uhlenbeck_step(x, z, 0.15, 0.2)[0]) == pytest.approx(0.625)
    assert float(ornstein_uhlenbeck_step(x, z, 0.15, 0.2, dt=0.01)[0]) == pytest.approx(0.51925)


def test_ornstein_uhlenbeck_action_uses_the_generator_and_scales_to_bounds():
    generator = tf.random.Generator.from_seed(3)
    replay = tf.random.Generator.from_state(generator.state.numpy(), generator.algorithm)
    state = tf.constant([[0.5], [-0.2]])
    action = tf.constant([[1.0], [0.0]])
    noisy, new_state = ornstein_uhlenbeck(action, generator, state, 0.15, 0.2, -2.0, 2.0)
    z = replay.normal([2, 1]).numpy()
    expected_state = state.numpy() * 0.85 + 0.2 * z
    np.testing.assert_allclose(new_state.numpy(), expected_state, rtol=1e-6)
    # Half-range 2: a + 2 x, clipped to [-2, 2].
    np.testing.assert_allclose(
        noisy.numpy(), np.clip(action.numpy() + 2.0 * expected_state, -2, 2), rtol=1e-6
    )


def test_gaussian_noise_statistics_and_clipping():
    generator = tf.random.Generator.from_seed(0)
    # sigma 0.1 of the half-range 2: std 0.2 around the action 0.5; 20k draws, so the sample
    # std is within about 0.2 * 3 / sqrt(2 * 20000) = 0.003 of 0.2.
    noisy = gaussian_noise(tf.fill([20000, 1], 0.5), generator, 0.1, -2.0, 2.0).numpy()
    assert noisy.mean() == pytest.approx(0.5, abs=0.006)
    assert noisy.std() == pytest.approx(0.2, abs=0.004)
    # Large noise is clipped to the bounds.
    wide = gaussian_noise(tf.fill([1000, 1], 1.9), generator, 1.0, -2.0, 2.0).numpy()
    assert wide.max() == pytest.approx(2.0) and wide.min() >= -2.0
