"""MaskedCartPole-v1: CartPole-v1 with the velocities removed, registered on `import rl`."""

import gymnasium as gym
import numpy as np

from rl import registry  # importing rl registers MaskedCartPole-v1
from rl.envs import make_vector_env


def test_observations_are_cartpoles_position_and_angle():
    masked, full = gym.make("MaskedCartPole-v1"), gym.make("CartPole-v1")
    assert masked.observation_space.shape == (2,)
    np.testing.assert_array_equal(
        masked.observation_space.high, full.observation_space.high[[0, 2]]
    )
    obs_m, _ = masked.reset(seed=3)
    obs_f, _ = full.reset(seed=3)
    np.testing.assert_array_equal(obs_m, obs_f[[0, 2]])
    for action in [0, 1, 1, 0, 1, 1, 1]:  # same dynamics, same rewards and ends
        obs_m, reward_m, term_m, trunc_m, _ = masked.step(action)
        obs_f, reward_f, term_f, trunc_f, _ = full.step(action)
        np.testing.assert_array_equal(obs_m, obs_f[[0, 2]])
        assert (reward_m, term_m, trunc_m) == (reward_f, term_f, trunc_f)


def test_registered_name_works_through_the_env_factory_with_cartpoles_time_limit():
    # In rl's env registry too, so env worker processes can rebuild it (--num_workers).
    assert "MaskedCartPole-v1" in registry.envs.names()
    env, spec = make_vector_env("MaskedCartPole-v1", 2, seed=0)
    assert spec.obs_shape == (2,) and spec.num_actions == 2
    assert spec.max_episode_steps == 500
    obs, *_ = env.step(np.zeros(2, np.int64))
    assert obs.shape == (2, 2)
    env.close()
