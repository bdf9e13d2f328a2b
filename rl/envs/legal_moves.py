"""LegalMoves: a task written in a few lines where illegal actions matter (docs/masking.md).

Each step shows 4 action values in [0, 1) and which actions are legal (each with probability
1/2, at least one). A legal action earns its value; an illegal one costs 1 and ends the episode,
as an illegal move ends a game. An episode is 20 steps: the best policy, the legal action of the
largest value, earns about 12.9; a uniformly random legal action 10; a policy that ignores the mask
loses most episodes within a few steps. The mask comes as the `action_mask` key of a Dict
observation, or with `mask_in_info=True` as `info["action_mask"]` beside a Box observation (as
gymnasium's Taxi sends it): rl reads either.

Registered as `LegalMoves-v0` with gymnasium on `import rl` and in rl's env registry.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from rl.registry import register_env

ENV_ID = "LegalMoves-v0"
NUM_ACTIONS = 4
EPISODE_STEPS = 20
ILLEGAL_REWARD = -1.0


class LegalMoves(gym.Env):
    """Pick the legal action of the largest value, each step; an illegal one ends the episode."""

    def __init__(self, mask_in_info: bool = False) -> None:
        self.mask_in_info = mask_in_info
        values = gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32)
        mask = gym.spaces.MultiBinary(NUM_ACTIONS)
        self.observation_space = (
            values if mask_in_info else gym.spaces.Dict({"values": values, "action_mask": mask})
        )
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)

    def _draw(self) -> tuple[Any, dict[str, Any]]:
        self._values = self.np_random.random(NUM_ACTIONS).astype(np.float32)
        self._mask = (self.np_random.random(NUM_ACTIONS) < 0.5).astype(np.int8)
        if not self._mask.any():
            self._mask[self.np_random.integers(NUM_ACTIONS)] = 1
        if self.mask_in_info:
            return self._values.copy(), {"action_mask": self._mask.copy()}
        return {"values": self._values.copy(), "action_mask": self._mask.copy()}, {}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        return self._draw()

    def step(self, action: int):
        if not self._mask[int(action)]:
            obs, info = self._draw()
            return obs, ILLEGAL_REWARD, True, False, info
        reward = float(self._values[int(action)])
        obs, info = self._draw()
        return obs, reward, False, False, info


if ENV_ID not in gym.registry:  # importing twice (e.g. under pytest) must not re-register
    gym.register(id=ENV_ID, entry_point=LegalMoves, max_episode_steps=EPISODE_STEPS)


@register_env(ENV_ID)
def legal_moves(**kwargs) -> gym.Env:
    """`gym.make("LegalMoves-v0")`: with its 20-step time limit."""
    return gym.make(ENV_ID, **kwargs)
