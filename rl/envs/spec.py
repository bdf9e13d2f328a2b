"""EnvSpec: the facts about an environment that models and agents are built from.

Observation shapes and action bounds are runtime facts of the env, not hyper-parameters, so
they travel in this frozen record instead of living in hparams (docs/architecture.md, "Contracts").
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from rl.envs.packed_observation import ObsLayout
from rl.errors import UserError


@dataclass(frozen=True)
class EnvSpec:
    """Shapes, dtypes and action type of a (vector) environment."""

    env_id: str
    num_envs: int
    obs_shape: tuple[int, ...]
    obs_dtype: np.dtype
    action_type: str  # "discrete" or "box"
    num_actions: int  # discrete: number of actions; box: 0
    action_shape: tuple[int, ...]  # discrete: (); box: the action vector's shape
    action_dtype: np.dtype
    action_low: np.ndarray | None  # box only
    action_high: np.ndarray | None  # box only
    max_episode_steps: int | None
    # Observations stack this many frames along their last axis, newest last, and consecutive
    # observations of an episode share all but one frame (Atari): replay stores each frame once.
    frame_stack: int = 0
    # The env puts the raw full-game score into info["game_score"] when a game ends (Atari);
    # with episodic life an episode (one life) can be shorter than a game.
    reports_game_score: bool = False
    # Dict/Tuple observations or an action mask: observations are packed float32 vectors and this
    # says where each key lies (rl/envs/packed_observation.py); None: plain Box observations.
    obs_layout: ObsLayout | None = None

    @property
    def discrete(self) -> bool:
        return self.action_type == "discrete"

    @property
    def action_masked(self) -> bool:
        """Whether observations carry a mask of the legal actions."""
        return self.obs_layout is not None and self.obs_layout.action_mask is not None

    @classmethod
    def from_spaces(
        cls,
        env_id: str,
        num_envs: int,
        observation_space: gym.Space,
        action_space: gym.Space,
        max_episode_steps: int | None,
        obs_layout: ObsLayout | None = None,
    ) -> EnvSpec:
        """Builds a spec from single-env spaces; unsupported spaces are a UserError."""
        if not isinstance(observation_space, gym.spaces.Box):
            raise UserError(
                f"env {env_id!r} has a {type(observation_space).__name__} observation space; "
                "only Box observations are supported (wrap it, e.g. FlattenObservation)"
            )
        common = dict(
            env_id=env_id,
            num_envs=num_envs,
            obs_shape=tuple(observation_space.shape),
            obs_dtype=np.dtype(observation_space.dtype),
            max_episode_steps=max_episode_steps,
            obs_layout=obs_layout,
        )
        if isinstance(action_space, gym.spaces.Discrete):
            return cls(
                **common,
                action_type="discrete",
                num_actions=int(action_space.n),
                action_shape=(),
                action_dtype=np.dtype(np.int64),
                action_low=None,
                action_high=None,
            )
        if isinstance(action_space, gym.spaces.Box):
            return cls(
                **common,
                action_type="box",
                num_actions=0,
                action_shape=tuple(action_space.shape),
                action_dtype=np.dtype(np.float32),
                action_low=np.asarray(action_space.low, np.float32),
                action_high=np.asarray(action_space.high, np.float32),
            )
        raise UserError(
            f"env {env_id!r} has a {type(action_space).__name__} action space; "
            "only Discrete and Box actions are supported"
        )
