"""The Fetch tasks of gymnasium-robotics (Plappert et al. 2018, https://arxiv.org/abs/1802.09464)
under their own ids (`--env FetchReach-v4`): goal-conditioned MuJoCo tasks for hindsight replay.

A Fetch observation is {"observation": [10 or 25], "achieved_goal": [3], "desired_goal": [3]};
rl packs it (docs/observations.md) and `memory=her` relabels its goals (docs/goal_conditioned.md).
The sparse tasks reward -1 per step away from the goal and 0 within 5 cm of it, over 50 steps,
and `info["is_success"]` says whether the gripper (or object) is there. gymnasium-robotics is
imported on first use (the `robotics` extra).
"""

from __future__ import annotations

import contextlib
import functools
import io

import gymnasium as gym

from rl.errors import UserError
from rl.registry import register_env
from rl.utils.private_apis import fix_robotics_joint_types

TASKS = tuple(
    f"Fetch{task}{reward}-v4"
    for task in ("Reach", "Push", "Slide", "PickAndPlace")
    for reward in ("", "Dense")
)


@functools.cache
def register_robotics_ids() -> None:
    """Imports gymnasium-robotics and registers its ids with gymnasium, once per process."""
    try:
        # Its import prints (to stderr) a note on the Adroit tasks' rewards, which rl leaves.
        with contextlib.redirect_stderr(io.StringIO()):
            import gymnasium_robotics
    except ImportError as e:
        raise UserError(
            f"gymnasium-robotics is not installed ({e}); install it with `.venv/bin/pip "
            "install gymnasium-robotics==1.4.2` (or the `robotics` extra)"
        ) from None
    gym.register_envs(gymnasium_robotics)
    fix_robotics_joint_types()


def check_renderable(env_name: str) -> None:
    """UserError for a Fetch task asked to render: MuJoCo draws through Mesa, which crashes
    beside TensorFlow's LLVM, and the child process that draws the locomotion envs' frames
    (rl/envs/mujoco_frames.py) cannot rebuild these tasks yet."""
    if env_name in TASKS:
        raise UserError(
            f"{env_name} cannot be rendered or recorded by rl yet; train it without "
            "--record_video and --render"
        )


def make_fetch(gym_id: str, **kwargs) -> gym.Env:
    """`gym.make(gym_id)` once gymnasium-robotics has registered it (50-step episodes)."""
    if kwargs.get("render_mode") is not None:
        check_renderable(gym_id)
    register_robotics_ids()
    return gym.make(gym_id, **kwargs)


for _task in TASKS:
    register_env(_task, functools.partial(make_fetch, _task))
