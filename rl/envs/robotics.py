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
import sys

import gymnasium as gym

from rl.errors import UserError
from rl.registry import register_env
from rl.utils import private_apis
from rl.utils.private_apis import patch_robotics_joint_types

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
    private_apis.fix_robotics_joint_types()


def register_in_frames_process() -> None:
    """`register_robotics_ids` for the process that draws the frames, which imports nothing of
    rl (rl/envs/mujoco_frames.py): this function and the patch reach it pickled by value."""
    with contextlib.redirect_stderr(io.StringIO()):  # the note on the Adroit tasks, as above
        import gymnasium_robotics

    gym.register_envs(gymnasium_robotics)
    patch_robotics_joint_types()  # a function (by value), not the module (rl would be imported)


def make_fetch(gym_id: str, **kwargs) -> gym.Env:
    """`gym.make(gym_id)` once gymnasium-robotics has registered it (50-step episodes). Its
    rgb_array frames are drawn in a child process, as the locomotion envs' are (MuJoCo draws
    through Mesa, which crashes beside TensorFlow's LLVM), with the goal marker where the
    simulated episode's goal is."""
    register_robotics_ids()
    if kwargs.get("render_mode") != "rgb_array":
        return gym.make(gym_id, **kwargs)
    # Imported here: the peers venv (no TensorFlow) imports this module to step these tasks.
    import cloudpickle

    from rl.envs.mujoco import choose_mujoco_gl
    from rl.envs.mujoco_frames import ChildProcessFrames

    choose_mujoco_gl(rendering=True)
    kwargs = {key: value for key, value in kwargs.items() if key != "render_mode"}
    for module in (sys.modules[__name__], private_apis):
        cloudpickle.register_pickle_by_value(module)
    return ChildProcessFrames(
        gym.make(gym_id, **kwargs), gym_id, kwargs, register_in_frames_process, ("goal",)
    )


for _task in TASKS:
    register_env(_task, functools.partial(make_fetch, _task))
