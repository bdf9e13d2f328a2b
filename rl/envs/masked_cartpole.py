"""A partially observable CartPole: the agent sees cart position and pole angle, no velocities.

CartPole-v1's observation is (x, x_dot, theta, theta_dot). Without the two velocities one
observation does not determine the state (a pole at angle 0 may be falling either way), so a
feed-forward policy cannot balance the pole for long; a recurrent policy can, by inferring the
velocities from consecutive observations. This is the standard "CartPole without velocities"
benchmark of recurrent RL (e.g. rl-baselines3-zoo's CartPoleNoVel-v1, which zeroes the velocities
instead of removing them; here they are removed so the observation is honestly 2-dimensional).

Registered with gymnasium as `MaskedCartPole-v1` (same dynamics, rewards and 500-step time limit
as CartPole-v1) on `import rl`, so `gym.make` accepts it, and under the same name in rl's env
registry, which `--env` and `hparams.env` resolve first: env worker processes
(`--num_workers`) rebuild envs from that factory, whose module import registers the gymnasium
id there too (a bare gymnasium id would not exist in a fresh worker process).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv

from rl.registry import register_env

ENV_ID = "MaskedCartPole-v1"
# Indices of (x, x_dot, theta, theta_dot) that stay observable.
VISIBLE = (0, 2)


class MaskVelocity(gym.ObservationWrapper):
    """Keeps the observation entries at `VISIBLE` (cart position, pole angle) of a CartPole."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.observation_space
        index = list(VISIBLE)
        self.observation_space = gym.spaces.Box(
            low=space.low[index], high=space.high[index], dtype=space.dtype
        )

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return np.asarray(observation, self.observation_space.dtype)[list(VISIBLE)]


def make_masked_cartpole(render_mode: str | None = None) -> gym.Env:
    """CartPole-v1's dynamics with the velocities removed (gymnasium entry point)."""
    return MaskVelocity(CartPoleEnv(render_mode=render_mode))


if ENV_ID not in gym.registry:  # importing twice (e.g. under pytest) must not re-register
    gym.register(
        id=ENV_ID, entry_point=make_masked_cartpole, max_episode_steps=500, reward_threshold=475.0
    )


@register_env(ENV_ID)
def masked_cartpole(**kwargs) -> gym.Env:
    """`gym.make("MaskedCartPole-v1")`: with the 500-step time limit of its registration."""
    return gym.make(ENV_ID, **kwargs)
