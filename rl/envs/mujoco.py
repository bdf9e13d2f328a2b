"""gymnasium's MuJoCo locomotion envs (HalfCheetah-v5, Hopper-v5, Walker2d-v5, Ant-v5, ...).

`make_mujoco` builds them as `gym.make` does (the 1000-step limit truncates), with four changes:
- `render_mode="rgb_array"` (videos) draws the frames in a child process without TensorFlow
  (rl/envs/mujoco_frames.py says why), off-screen through EGL or OSMesa on Linux without a
  display: `choose_mujoco_gl` sets `MUJOCO_GL` before MuJoCo loads.
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

import ctypes
import functools
import logging
import os
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from rl.envs.mujoco_frames import ChildProcessFrames
from rl.errors import UserError
from rl.utils.video import display_available

LOGGER = logging.getLogger(__name__)
GYMNASIUM_MODEL_DEPRECATION = "compiler attribute 'settotalmass' is deprecated"
# MuJoCo's off-screen OpenGL backends (MUJOCO_GL values) and their libraries, best first: EGL
# renders on a GPU or Mesa's software device, OSMesa on the CPU only (slower).
HEADLESS_GL_BACKENDS = (("egl", "EGL"), ("osmesa", "OSMesa"))


def is_mujoco_id(name: str) -> bool:
    """Whether `name` is one of gymnasium's MuJoCo env ids."""
    spec = gym.registry.get(name)
    entry_point = spec.entry_point if spec is not None else None
    return isinstance(entry_point, str) and entry_point.startswith("gymnasium.envs.mujoco")


def opengl_library_loads(name: str) -> bool:
    """Whether `lib<name>` loads under one of the file names PyOpenGL tries (`lib<name>.so`, then
    `.so.9` down to `.so.0`), so that a backend is chosen only where PyOpenGL will find it."""
    for filename in [f"lib{name}.so", *(f"lib{name}.so.{i}" for i in range(9, -1, -1))]:
        try:
            ctypes.CDLL(filename)
        except OSError:
            continue
        return True
    return False


def choose_mujoco_gl(
    rendering: bool, library_loads: Callable[[str], bool] = opengl_library_loads
) -> str | None:
    """Sets `MUJOCO_GL` on a Linux machine without a display (servers, CI, pods) to the first of
    `HEADLESS_GL_BACKENDS` whose library loads, and returns it. Why: with `MUJOCO_GL` unset,
    gymnasium takes GLFW, whose context silently fails without a display, and the first frame
    dies in `mjr_makeContext` ("an OpenGL platform library has not been loaded"). Called before
    `import mujoco` (MuJoCo's own `GLContext` reads the variable then) and before the frames'
    child process starts, which inherits it. Returns None where it leaves `MUJOCO_GL` alone: the
    user's own, a display (GLFW works), macOS and Windows. Where no library loads, a `rendering`
    caller gets a `UserError` naming what to install; others need no OpenGL."""
    if "MUJOCO_GL" in os.environ or display_available():
        return None
    for backend, library in HEADLESS_GL_BACKENDS:
        if library_loads(library):
            os.environ["MUJOCO_GL"] = backend
            return backend
    if rendering:
        raise UserError(
            "MuJoCo cannot render without a display: neither EGL (libEGL) nor OSMesa "
            "(libOSMesa) loads here; install one (Debian/Ubuntu: apt-get install libegl1, or "
            "libosmesa6), or set MUJOCO_GL to a backend that works on this machine"
        )
    return None


def log_mujoco_warning(message: str) -> None:
    """MuJoCo's warning handler (`mujoco.set_mju_user_warning`): to `LOGGER`, see above."""
    known = GYMNASIUM_MODEL_DEPRECATION in message
    LOGGER.log(logging.DEBUG if known else logging.WARNING, "MuJoCo: %s", message)


def make_mujoco(name: str, **env_kwargs: Any) -> gym.Env:
    """`gym.make(name, **env_kwargs)` with float32 observations, clipped actions and MuJoCo's
    warnings logged (the handler is set in the process that builds the env, before MuJoCo
    compiles the model); `MUJOCO_GL` is chosen first, and rgb_array frames come from a child."""
    render_mode = env_kwargs.get("render_mode")
    choose_mujoco_gl(rendering=render_mode is not None)
    try:
        import mujoco
    except ImportError as e:  # pragma: no cover - gymnasium[mujoco] is pinned in requirements
        raise UserError(
            f"env {name!r} needs MuJoCo ({e}); install rl with its `mujoco` extra "
            "(pip install -e '.[mujoco]') or run ./setup.sh"
        ) from None
    mujoco.set_mju_user_warning(log_mujoco_warning)
    if render_mode == "rgb_array":
        env_kwargs = {k: v for k, v in env_kwargs.items() if k != "render_mode"}
        env = ChildProcessFrames(gym.make(name, **env_kwargs), name, env_kwargs)
    else:
        env = gym.make(name, **env_kwargs)
    actions = env.action_space
    clip = functools.partial(np.clip, a_min=actions.low, a_max=actions.high)
    env = gym.wrappers.TransformAction(env, clip, actions)
    float32_space = gym.spaces.Box(-np.inf, np.inf, env.observation_space.shape, np.float32)
    to_float32 = functools.partial(np.asarray, dtype=np.float32)
    return gym.wrappers.TransformObservation(env, to_float32, float32_space)
