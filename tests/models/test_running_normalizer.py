"""VecNormalize's arithmetic (rl/models/running_normalizer.py), checked by hand."""

import numpy as np
import pytest
import tensorflow as tf

from rl.models.running_normalizer import ObservationNormalizer, RewardScaler, combine_moments


def test_combine_moments_equals_the_moments_of_the_union():
    # [1, 3]: mean 2, variance 1; [5, 7, 9]: mean 7, variance 8/3. Union [1, 3, 5, 7, 9]:
    # mean 5, variance (16 + 4 + 0 + 4 + 16) / 5 = 8, count 5.
    mean, var, count = combine_moments(2.0, 1.0, 2.0, 7.0, 8.0 / 3.0, 3.0)
    assert mean == pytest.approx(5.0) and var == pytest.approx(8.0) and count == 5.0


def test_observation_normalizer_updates_and_standardizes():
    norm = ObservationNormalizer((2,))
    norm.update(tf.constant([[0.0, 2.0], [2.0, 6.0]]))
    # The prior is a pseudo-sample of weight 1e-4 with mean 0 and variance 1 (SB3's
    # RunningMeanStd); the batch has mean [1, 4], variance [1, 4], count 2. Moments of the
    # union: mean = 2 [1, 4] / 2.0001; E[x^2] = (1e-4 * 1 + [0 + 4, 4 + 36]) / 2.0001.
    total = 2.0001
    mean = np.array([2.0, 8.0]) / total
    var = (1e-4 + np.array([4.0, 40.0])) / total - mean**2
    np.testing.assert_allclose(norm.mean.numpy(), mean, rtol=1e-5)
    np.testing.assert_allclose(norm.var.numpy(), var, rtol=1e-4)
    assert float(norm.count.numpy()) == pytest.approx(total)
    obs = tf.constant([[3.0, -1.0], [1.0, 1000.0]])
    expected = (obs.numpy() - mean) / np.sqrt(var + 1e-8)
    expected[1, 1] = 10.0  # (1000 - 4) / 2 is clipped to +10
    np.testing.assert_allclose(norm(obs).numpy(), expected, rtol=1e-4, atol=1e-6)


def test_reward_scaler_divides_by_the_return_std_and_resets_at_episode_ends():
    scaler = RewardScaler(num_envs=2, gamma=0.5)
    # Step 1: returns [1, 1]; env 1's episode ends (its return restarts at 0).
    first = scaler(np.array([1.0, 1.0]), np.array([False, True]))
    # The returns seen so far, [1, 1], and the 1e-4 prior (mean 0, variance 1): mean 2 / 2.0001,
    # variance (1e-4 + 2) / 2.0001 - mean^2 ~ 1e-4, so 1 / sqrt(1e-4) = 100 is clipped to 10.
    np.testing.assert_allclose(first, [10.0, 10.0])
    # Step 2: rewards [2, 4] -> returns [0.5 * 1 + 2, 0 + 4] = [2.5, 4].
    second = scaler(np.array([2.0, 4.0]), np.array([False, False]))
    seen = np.array([1.0, 1.0, 2.5, 4.0])
    total = 4.0001
    mean = seen.sum() / total
    var = (1e-4 + np.square(seen).sum()) / total - mean**2
    np.testing.assert_allclose(second, np.array([2.0, 4.0]) / np.sqrt(var + 1e-8), rtol=1e-6)
    np.testing.assert_allclose(scaler.returns, [2.5, 4.0])
    # The statistics round-trip through a checkpoint.
    restored = RewardScaler(num_envs=2, gamma=0.5)
    restored.load_state_dict(scaler.state_dict())
    np.testing.assert_allclose(
        restored(np.array([1.0, 1.0]), np.array([True, True])),
        scaler(np.array([1.0, 1.0]), np.array([True, True])),
    )
    with pytest.raises(ValueError, match="num_envs changed"):
        RewardScaler(num_envs=3, gamma=0.5).load_state_dict(scaler.state_dict())
