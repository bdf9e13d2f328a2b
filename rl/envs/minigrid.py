"""MiniGrid tasks (Chevalier-Boisvert et al. 2023, https://arxiv.org/abs/2306.13831) as
`minigrid/<task>`: their Dict observations without the `mission` text.

A MiniGrid observation is {"image": [7, 7, 3] uint8, "direction": Discrete(4), "mission": Text}.
The mission sentence is fixed per task here and no encoder reads text, so it is dropped; the
"image" holds object, colour and state indices (0-10) of the cells in view, not pixels, so it
becomes float32 (as uint8 it would be scaled by 1/255 like a frame). rl packs the rest
(docs/observations.md): the grid flattened, the direction one-hot. minigrid is imported on first
use (pip install minigrid, the `minigrid` extra).
"""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np

from rl.errors import UserError
from rl.registry import register_env

# rl env name -> gymnasium id; each task's time limit is its own (max_steps, e.g. 256 for 8x8).
TASKS = {
    "minigrid/Empty-5x5-v0": "MiniGrid-Empty-5x5-v0",
    "minigrid/Empty-8x8-v0": "MiniGrid-Empty-8x8-v0",
    "minigrid/DoorKey-5x5-v0": "MiniGrid-DoorKey-5x5-v0",
}
KEPT_KEYS = ("image", "direction")


class GridIndicesAsFloat(gym.ObservationWrapper):
    """The "image" key as float32 indices (values unchanged): a grid of codes, not a frame."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        image = env.observation_space["image"]
        spaces = dict(env.observation_space.spaces)
        spaces["image"] = gym.spaces.Box(0.0, float(image.high.max()), image.shape, np.float32)
        self.observation_space = gym.spaces.Dict(spaces)

    def observation(self, observation: dict) -> dict:
        return {**observation, "image": observation["image"].astype(np.float32)}


def make_minigrid(gym_id: str, **kwargs) -> gym.Env:
    """`gym.make(gym_id)` with only the image (as float indices) and the direction."""
    try:
        import minigrid  # noqa: F401  (registers the MiniGrid-* ids)
    except ImportError as e:
        raise UserError(
            f"minigrid is not installed ({e}); install it with `.venv/bin/pip install "
            "minigrid==3.2.0` (or the `minigrid` extra)"
        ) from None
    env = gym.wrappers.FilterObservation(gym.make(gym_id, **kwargs), list(KEPT_KEYS))
    return GridIndicesAsFloat(env)


for _name, _gym_id in TASKS.items():
    register_env(_name, functools.partial(make_minigrid, _gym_id))
