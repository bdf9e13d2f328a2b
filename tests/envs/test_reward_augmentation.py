"""Reward augmentations: hand-computed shaped rewards, true rewards kept beside them, and the
checks that reject a bad augmentation before anything runs."""

import math

import gymnasium as gym
import numpy as np
import pytest

import rl  # noqa: F401
from rl import registry
from rl.envs import make_vector_env
from rl.envs.reward_augmentation import (
    KeepTrueReward,
    MountainCarEnergyShaping,
    check_reward_augmentation,
    reward_augmentation_from_hparams,
    true_rewards,
)
from rl.errors import UserError


class Scripted(gym.Env):
    """Plays back fixed (position, velocity) observations with reward -1 per step; the step
    with index `end_at` ends the episode, as a termination or a truncation."""

    observation_space = gym.spaces.Box(-2.0, 2.0, (2,), np.float64)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, observations, end_at, truncate=False):
        self.observations = [np.array(o, np.float64) for o in observations]
        self.end_at, self.truncate = end_at, truncate

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.observations[0], {}

    def step(self, action):
        self.t += 1
        end = self.t == self.end_at
        terminated, truncated = end and not self.truncate, end and self.truncate
        return self.observations[self.t], -1.0, terminated, truncated, {}


# With gravity g = 0.0025 and unit u = g / 3, phi(x, v) = scale * (v^2 / 2 + u sin(3x)) / u.
# For scale 2:  s0 = (-pi/6, 0):    sin(-pi/2) = -1                    -> phi = -2
#               s1 = (0, 0):        sin(0) = 0                          -> phi = 0
#               s2 = (pi/6, 0.05):  0.05^2 / 2 / u = 0.00125 / u = 1.5, sin(pi/2) = 1
#                                                                       -> phi = 2 * 2.5 = 5
OBSERVATIONS = [(-math.pi / 6, 0.0), (0.0, 0.0), (math.pi / 6, 0.05), (0.3, 0.01)]


def test_mountain_car_energy_shaping_hand_computed_with_termination():
    env = MountainCarEnergyShaping(Scripted(OBSERVATIONS, end_at=3), gamma=0.9, scale=2.0)
    env.reset()
    shaped = [env.step(2)[1] for _ in range(3)]
    # F = gamma * phi(s') - phi(s), and phi(terminal) = 0:
    #   step 1: -1 + 0.9 * 0 - (-2) = 1
    #   step 2: -1 + 0.9 * 5 - 0    = 3.5
    #   step 3 (terminated): -1 + 0 - 5 = -6
    np.testing.assert_allclose(shaped, [1.0, 3.5, -6.0], rtol=1e-9)
    # Policy invariance (Ng et al. 1999): the discounted shaped return is the true one minus
    # phi(s0): (1 + 0.9 * 3.5 + 0.81 * -6) = (-1 - 0.9 - 0.81) + 2.
    discounted = sum(0.9**t * r for t, r in enumerate(shaped))
    assert discounted == pytest.approx((-1 - 0.9 - 0.81) + 2.0, rel=1e-9)


def test_truncation_keeps_the_potential_of_the_last_observation():
    env = MountainCarEnergyShaping(
        Scripted(OBSERVATIONS, end_at=2, truncate=True), gamma=0.9, scale=2.0
    )
    env.reset()
    env.step(0)
    _, reward, terminated, truncated, _ = env.step(0)
    assert truncated and not terminated
    assert reward == pytest.approx(-1 + 0.9 * 5.0 - 0.0)  # phi(s2) = 5, not 0


def test_reset_restarts_the_potential():
    env = MountainCarEnergyShaping(Scripted(OBSERVATIONS, end_at=3), gamma=0.9, scale=2.0)
    env.reset()
    env.step(0)
    env.reset()  # back at s0: the next step again starts from phi(s0) = -2
    assert env.step(0)[1] == pytest.approx(1.0)


def _mountain_car_hparams(**values):
    hp = registry.get_hparams("dqn")()
    hp.env = "MountainCar-v0"
    hp.gamma = 0.9
    for key, value in values.items():
        setattr(hp, key, value)
    return hp


def test_vector_env_shapes_rewards_and_keeps_true_ones_across_episode_ends():
    hp = _mountain_car_hparams(
        reward_augmentation="mountain_car_energy", reward_augmentation_kwargs={"scale": 2.0}
    )
    env, _ = make_vector_env(
        "MountainCar-v0",
        2,
        0,
        max_episode_steps=3,
        reward_augmentation=reward_augmentation_from_hparams(hp),
    )
    obs, _ = env.reset(seed=0)
    unit = 0.0025 / 3

    def phi(o):
        return 2.0 * (0.5 * o[:, 1] ** 2 + unit * np.sin(3 * o[:, 0])) / unit

    for step in range(3):
        next_obs, reward, terminated, truncated, info = env.step(np.array([2, 0]))
        final = info["final_obs"] if step == 2 else None
        true_next = np.stack(list(final)) if final is not None else next_obs
        np.testing.assert_allclose(reward, -1 + 0.9 * phi(true_next) - phi(obs), rtol=1e-5)
        # MountainCar pays -1 per step; the 3rd step truncates both copies (time limit), so
        # the true rewards come from final_info there.
        np.testing.assert_array_equal(true_rewards(reward, info), [-1.0, -1.0])
        assert truncated.all() == (step == 2) and not terminated.any()
        obs = next_obs


def test_without_augmentation_true_rewards_are_the_rewards():
    env, _ = make_vector_env("CartPole-v1", 2, 0)
    env.reset(seed=0)
    _, reward, *_, info = env.step(np.array([0, 1]))
    assert reward_augmentation_from_hparams(_mountain_car_hparams()) is None
    np.testing.assert_array_equal(true_rewards(reward, info), reward)


def test_scale_and_clip_augmentations_keep_the_true_reward():
    for name, kwargs, expected in (
        ("scale_reward", {"scale": 0.5}, -0.5),
        ("clip_reward", {"min_reward": -0.25, "max_reward": 1.0}, -0.25),
    ):
        hp = _mountain_car_hparams(reward_augmentation=name, reward_augmentation_kwargs=kwargs)
        env = reward_augmentation_from_hparams(hp)(gym.make("MountainCar-v0"))
        env.reset(seed=0)
        _, reward, *_, info = env.step(1)
        assert reward == pytest.approx(expected) and info["true_reward"] == -1.0
    assert isinstance(env.env, KeepTrueReward)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"reward_augmentation": "mountain_car_enrgy"}, "did you mean 'mountain_car_energy'"),
        (
            {
                "reward_augmentation": "mountain_car_energy",
                "reward_augmentation_kwargs": {"sc": 1.0},
            },
            "it takes: scale",
        ),
        (
            {
                "reward_augmentation": "mountain_car_energy",
                "reward_augmentation_kwargs": {"gamma": 0.5},
            },
            "must not set gamma",
        ),
        ({"reward_augmentation_kwargs": {"scale": 1.0}}, "reward_augmentation is None"),
        (
            {"reward_augmentation": "scale_reward", "env": "tf/MountainCar-v0"},
            "compiled path",
        ),
        ({"reward_augmentation": "scale_reward"}, "missing a required argument: 'scale'"),
    ],
)
def test_bad_augmentation_settings_are_user_errors(values, message):
    with pytest.raises(UserError, match=message):
        check_reward_augmentation(_mountain_car_hparams(**values))
