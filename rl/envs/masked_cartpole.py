"""A partially observable CartPole: the agent sees cart position and pole angle, no velocities.

Without the velocities one observation does not determine the state, so a feed-forward policy
cannot balance the pole for long; a recurrent one can, by inferring them from consecutive
observations. This is the "CartPole without velocities" benchmark of recurrent RL (the zoo's
CartPoleNoVel-v1 zeroes the velocities; here they are removed, so the observation is honestly
2-dimensional).

Registered as `MaskedCartPole-v1` with gymnasium on `import rl` and in rl's env registry, which
`--env` resolves first: env worker processes rebuild envs from that factory, whose module import
registers the gymnasium id there too.
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
