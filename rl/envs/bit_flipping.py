"""BitFlipping: the goal-conditioned task of the HER paper (Andrychowicz et al. 2017, sec. 3.1,
https://arxiv.org/abs/1707.01495), small enough for a test of hindsight replay.

The state is `n_bits` bits, the goal another `n_bits` bits; action i flips bit i. The reward is
-1 each step the state differs from the goal and 0 when it matches, so a random policy almost never
sees a reward of 0 once `n_bits` is more than a few; relabelling goals with states actually reached
(`memory=her`, docs/goal_conditioned.md) is what makes it learnable. Observations are a Dict with
gymnasium-robotics' goal keys (`observation`, `achieved_goal`, `desired_goal`) and the env has its
batched `compute_reward`, as a `GoalEnv` does. An episode ends when the state matches the goal
(every action flips a bit, so the agent could not stay there) or after `n_bits` steps, enough to
flip every bit once; `info["is_success"]` says whether the state matches the goal. As in SB3's
BitFlippingEnv, hindsight replay keeps a transition's stored `terminated` when it relabels it.

Registered as `BitFlipping-v0` with gymnasium on `import rl` and in rl's env registry.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from rl.registry import register_env

ENV_ID = "BitFlipping-v0"
DEFAULT_BITS = 8


class BitFlipping(gym.Env):
    """Flip bits until the state equals the goal; -1 per step away from it, 0 on reaching it."""

    def __init__(self, n_bits: int = DEFAULT_BITS) -> None:
        if int(n_bits) < 1:
            raise ValueError(f"n_bits must be >= 1, got {n_bits}")
        self.n_bits = int(n_bits)
        bits = gym.spaces.MultiBinary(self.n_bits)
        self.observation_space = gym.spaces.Dict(
            {"observation": bits, "achieved_goal": bits, "desired_goal": bits}
        )
        self.action_space = gym.spaces.Discrete(self.n_bits)

    def compute_reward(
        self, achieved_goal: np.ndarray, desired_goal: np.ndarray, info: Any
    ) -> np.ndarray:
        """0 where every bit matches, else -1; works on one goal or a batch [..., n_bits]."""
        del info
        matches = np.all(np.asarray(achieved_goal) == np.asarray(desired_goal), axis=-1)
        return matches.astype(np.float32) - 1.0

    def _observation(self) -> dict[str, np.ndarray]:
        return {
            "observation": self._state.copy(),
            "achieved_goal": self._state.copy(),
            "desired_goal": self._goal.copy(),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._state = self.np_random.integers(0, 2, self.n_bits).astype(np.int8)
        self._goal = self.np_random.integers(0, 2, self.n_bits).astype(np.int8)
        return self._observation(), {"is_success": bool(np.array_equal(self._state, self._goal))}

    def step(self, action: int):
        self._state[int(action)] ^= 1
        reward = float(self.compute_reward(self._state, self._goal, None))
        success = reward == 0.0
        return self._observation(), reward, success, False, {"is_success": success}


if ENV_ID not in gym.registry:  # importing twice (e.g. under pytest) must not re-register
    gym.register(id=ENV_ID, entry_point=BitFlipping, max_episode_steps=DEFAULT_BITS)


@register_env(ENV_ID)
def bit_flipping(n_bits: int = DEFAULT_BITS, **kwargs) -> gym.Env:
    """`gym.make("BitFlipping-v0", n_bits=...)`: an episode of n_bits steps."""
    return gym.make(ENV_ID, n_bits=n_bits, max_episode_steps=int(n_bits), **kwargs)
