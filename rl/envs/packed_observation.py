"""Dict and Tuple observations, and action masks, packed into one flat float32 vector.

Every part of `rl` below the models — vector envs, the collect loop, replay memories, n-step
accumulators, rollout buffers, Ray actors, checkpoints — moves one observation array per step.
Instead of teaching each of them nested observations, a structured observation is packed at the
env boundary into one float32 vector, and an `ObsLayout` (in the `EnvSpec`) says where each key
lies; the models unpack it inside their compiled graph (rl/models/observation_inputs.py) and pick
an encoder per key. Packing is lossless: integers (Discrete values, uint8 pixels, mask bits) are
exact in float32; its cost is memory (a uint8 image takes 4 bytes per pixel in replay).

An action mask (1 = legal) comes, as in gymnasium and sb3-contrib, from an `action_mask` key of a
Dict observation or from `info["action_mask"]` (gymnasium's Taxi); either way it is packed with
the observation it belongs to, so replay holds the next observation's mask for masked targets.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from rl.errors import UserError

# The observation key (or info key) that holds a mask of the legal actions.
ACTION_MASK_KEY = "action_mask"

# How a part is encoded: "image" [H, W, C] (a CNN where large enough), "vector" (flattened),
# "one_hot" (a Discrete value), "action_mask" (0/1 per action; also a vector input).
PART_KINDS = ("image", "vector", "one_hot", "action_mask")


@dataclass(frozen=True)
class ObsPart:
    """One key of a structured observation and where it lies in the packed vector."""

    key: str  # "image", a Tuple index "0", a nested Dict key "outer/inner"
    kind: str  # one of PART_KINDS
    shape: tuple[int, ...]  # the key's own shape (one_hot: ())
    offset: int  # first index in the packed vector
    size: int  # entries in the packed vector
    categories: int = 0  # one_hot: the Discrete space's n
    start: int = 0  # one_hot: the Discrete space's start (packed values are value - start)
    scale: float = 1.0  # uint8 Box: 1/255, so pixels reach the network in [0, 1]


@dataclass(frozen=True)
class ObsLayout:
    """Where the keys of a structured observation lie in its packed float32 vector."""

    parts: tuple[ObsPart, ...]
    size: int
    mask_in_info: bool = False  # the action mask comes from info["action_mask"]

    @property
    def space(self) -> gym.spaces.Box:
        """The packed observations' space."""
        return gym.spaces.Box(-np.inf, np.inf, (self.size,), np.float32)

    @property
    def action_mask(self) -> ObsPart | None:
        return next((p for p in self.parts if p.kind == "action_mask"), None)

    def describe(self) -> str:
        """One line: each key with its kind and shape (for logs and error messages)."""
        return ", ".join(f"{p.key}: {p.kind} {p.shape}" for p in self.parts)

    def pack(self, obs: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        """The packed [size] float32 vector of one observation (and its info's mask)."""
        packed = np.empty(self.size, np.float32)
        values = dict(_leaves(obs))
        if self.mask_in_info:
            values[ACTION_MASK_KEY] = (info or {}).get(ACTION_MASK_KEY)
        for part in self.parts:
            value = values[part.key]
            if part.kind == "one_hot":
                packed[part.offset] = int(value) - part.start
                continue
            value = np.asarray(value, np.float32).reshape(-1)
            if value.size != part.size:
                raise ValueError(
                    f"observation key {part.key!r} has {value.size} entries, its space {part.size}"
                )
            packed[part.offset : part.offset + part.size] = value
        return packed


def observation_layout(
    env_id: str,
    observation_space: gym.Space,
    action_space: gym.Space,
    info: dict[str, Any] | None = None,
) -> ObsLayout | None:
    """The layout of an env's observations, or None where a plain Box needs no packing; `info` is
    the info of a reset, read for an `action_mask`. UserError for what cannot be packed."""
    mask_in_info = info is not None and ACTION_MASK_KEY in info
    if isinstance(observation_space, gym.spaces.Box) and not mask_in_info:
        return None
    parts: list[ObsPart] = []
    offset = 0
    spaces = (
        [("observation", observation_space)]
        if isinstance(observation_space, gym.spaces.Box)
        else list(_space_leaves(env_id, observation_space))
    )
    for key, space in spaces:
        part = _part(env_id, key, space, offset)
        parts.append(part)
        offset += part.size
    if mask_in_info:
        if any(p.key == ACTION_MASK_KEY for p in parts):
            raise UserError(
                f"env {env_id!r} has an action mask both in its observation and in info; "
                "keep one (rl reads either)"
            )
        shape = tuple(np.shape(info[ACTION_MASK_KEY]))
        size = int(np.prod(shape))
        parts.append(ObsPart(ACTION_MASK_KEY, "action_mask", shape, offset, size))
        offset += size
    layout = ObsLayout(tuple(parts), offset, mask_in_info)
    if layout.action_mask is not None:
        _check_mask(env_id, layout.action_mask, action_space)
    return layout


def _check_mask(env_id: str, mask: ObsPart, action_space: gym.Space) -> None:
    """UserError unless the mask has one entry per discrete action."""
    if not isinstance(action_space, gym.spaces.Discrete):
        raise UserError(
            f"env {env_id!r} has an action mask but a {type(action_space).__name__} action "
            "space; masks are for Discrete actions (drop the 'action_mask' key)"
        )
    n = int(action_space.n)
    if mask.shape != (n,):
        raise UserError(
            f"env {env_id!r}: its action_mask has shape {mask.shape} but the env has {n} "
            f"actions; the mask needs one 0/1 entry per action, shape ({n},)"
        )


def _part(env_id: str, key: str, space: gym.Space, offset: int) -> ObsPart:
    """The part for one leaf space, or UserError naming the key and what to do."""
    if isinstance(space, gym.spaces.Discrete):
        n, start = int(space.n), int(space.start)
        return ObsPart(key, "one_hot", (), offset, 1, categories=n, start=start)
    if isinstance(space, gym.spaces.Box | gym.spaces.MultiBinary):
        shape = tuple(int(d) for d in space.shape)
        size = int(np.prod(shape))
        if key == ACTION_MASK_KEY:
            return ObsPart(key, "action_mask", shape, offset, size)
        uint8 = np.dtype(space.dtype) == np.uint8
        kind = "image" if len(shape) == 3 else "vector"
        return ObsPart(key, kind, shape, offset, size, scale=1.0 / 255.0 if uint8 else 1.0)
    raise UserError(
        f"env {env_id!r}: observation key {key!r} is a {type(space).__name__} space, which rl "
        "cannot encode (Box, MultiBinary and Discrete can); drop it with "
        "gymnasium.wrappers.FilterObservation or turn it into a Box"
    )


def _space_leaves(env_id: str, space: gym.Space, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(key, leaf space) of a Dict/Tuple space, in the space's own order of keys."""
    if isinstance(space, gym.spaces.Dict):
        for key, sub in space.spaces.items():
            yield from _space_leaves(env_id, sub, f"{prefix}{key}/")
    elif isinstance(space, gym.spaces.Tuple):
        for index, sub in enumerate(space.spaces):
            yield from _space_leaves(env_id, sub, f"{prefix}{index}/")
    else:  # a bare Discrete space (FrozenLake, Taxi) is one leaf, named as `_leaves` names it
        yield prefix.rstrip("/") or "observation", space


def _leaves(obs: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(key, value) of a Dict/Tuple observation, keyed as `_space_leaves` keys its spaces."""
    if isinstance(obs, dict):
        for key, value in obs.items():
            yield from _leaves(value, f"{prefix}{key}/")
    elif isinstance(obs, tuple):
        for index, value in enumerate(obs):
            yield from _leaves(value, f"{prefix}{index}/")
    else:
        yield prefix.rstrip("/") or "observation", obs


class PackObservation(gym.Wrapper):
    """Turns an env's structured observations (and info's action mask) into `layout`'s packed
    float32 vectors; the info keeps its mask, so code that reads it there still can."""

    def __init__(self, env: gym.Env, layout: ObsLayout) -> None:
        super().__init__(env)
        self.layout = layout
        self.observation_space = layout.space

    def reset(self, **kwargs) -> tuple[np.ndarray, dict]:
        obs, info = self.env.reset(**kwargs)
        return self.layout.pack(obs, info), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self.layout.pack(obs, info), reward, terminated, truncated, info
