"""gymnasium's MuJoCo locomotion envs (HalfCheetah-v5, Hopper-v5, Walker2d-v5, Ant-v5, ...).

`make_mujoco` builds them as `gym.make` does (the 1000-step limit truncates), with three changes:
- MuJoCo's warnings go to Python logging (`rl.envs.mujoco`), not to stderr and `MUJOCO_LOG.TXT`
  in the current directory: a run must not write into the user's directory. The `settotalmass`
  deprecation (gymnasium's model files, nothing a user can act on) is logged at DEBUG.
- Observations are float32 (MuJoCo's float64 would double the replay memory: 1.7 GB for a
  million Ant-v5 transitions).
- Actions are clipped to the action space, as SB3 does: MuJoCo clamps the controls, but
  gymnasium charges the control cost on the action as given, so an unclipped Gaussian sample
  would pay for force it never applied.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import gymnasium as gym
import numpy as np

from rl.errors import UserError

LOGGER = logging.getLogger(__name__)
GYMNASIUM_MODEL_DEPRECATION = "compiler attribute 'settotalmass' is deprecated"


def is_mujoco_id(name: str) -> bool:
    """Whether `name` is one of gymnasium's MuJoCo env ids."""
    spec = gym.registry.get(name)
    entry_point = spec.entry_point if spec is not None else None
    return isinstance(entry_point, str) and entry_point.startswith("gymnasium.envs.mujoco")


def log_mujoco_warning(message: str) -> None:
    """MuJoCo's warning handler (`mujoco.set_mju_user_warning`): to `LOGGER`, see above."""
    known = GYMNASIUM_MODEL_DEPRECATION in message
    LOGGER.log(logging.DEBUG if known else logging.WARNING, "MuJoCo: %s", message)


def make_mujoco(name: str, **env_kwargs: Any) -> gym.Env:
    """`gym.make(name, **env_kwargs)` with float32 observations, clipped actions and MuJoCo's
    warnings logged (the handler is set in the process that builds the env, before MuJoCo
    compiles the model)."""
    try:
        import mujoco
    except ImportError as e:  # pragma: no cover - gymnasium[mujoco] is pinned in requirements
        raise UserError(f"env {name!r} needs MuJoCo ({e}); run ./setup.sh") from None
    mujoco.set_mju_user_warning(log_mujoco_warning)
    env = gym.make(name, **env_kwargs)
    actions = env.action_space
    clip = functools.partial(np.clip, a_min=actions.low, a_max=actions.high)
    env = gym.wrappers.TransformAction(env, clip, actions)
    float32_space = gym.spaces.Box(-np.inf, np.inf, env.observation_space.shape, np.float32)
    to_float32 = functools.partial(np.asarray, dtype=np.float32)
    return gym.wrappers.TransformObservation(env, to_float32, float32_space)
