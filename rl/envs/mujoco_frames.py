"""Frames of a MuJoCo env drawn in a child process that never imports TensorFlow.

Why not in the training process: TensorFlow makes its copy of LLVM's symbols global
(RTLD_GLOBAL), and Mesa's software OpenGL (llvmpipe: what EGL and OSMesa draw with on a machine
without a GPU) then calls TensorFlow's LLVM instead of its own: the first frame crashes the
process (SIGSEGV in `mjr_makeContext`). So the env simulates in the training process, and a
child (`python -c`, not multiprocessing, whose spawn would re-run the user's main module and its
`import rl`) draws each state: it builds the same env with `render_mode="rgb_array"`, copies the
state in and renders it. `serve_frames` reaches the child pickled by value and uses nothing
from `rl`; requests and frames are pickles over the child's stdin and stdout. An env that draws
more than its physics state (a Fetch task's goal marker) names the attributes to copy with it.
"""

from __future__ import annotations

import functools
import pickle
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

import cloudpickle
import gymnasium as gym
import numpy as np

from rl.utils.processes import children_ignore_stop_signals

# The child: stdout carries the frames, so what it prints goes to stderr instead.
CHILD = (
    "import os, pickle, sys\n"
    "requests, replies = sys.stdin.buffer, os.fdopen(os.dup(1), 'wb')\n"
    "os.dup2(2, 1)\n"
    "pickle.load(requests)(requests, replies)\n"
)
CLOSE_TIMEOUT_S = 10.0


def serve_frames(
    name: str,
    env_kwargs: dict[str, Any],
    setup: Callable[[], None] | None,
    requests: IO,
    replies: IO,
) -> None:
    """Runs in the child: `setup()` (registering the env's package, if it needs it), then answers
    each request (a MuJoCo state, `mj_getState` full physics, and the unwrapped env's attributes
    to set) read from `requests` with its frame (HxWx3 uint8), or the error, until the parent
    closes the pipe."""
    import mujoco

    # The parent's env logs the model's warnings; MuJoCo's default handler would also write
    # them to MUJOCO_LOG.TXT in the working directory.
    mujoco.set_mju_user_warning(lambda message: None)
    if setup is not None:
        setup()
    env = gym.make(name, **{**env_kwargs, "render_mode": "rgb_array"})
    env.reset(seed=0)
    model, data = env.unwrapped.model, env.unwrapped.data
    while True:
        try:
            state, attributes = pickle.load(requests)
        except EOFError:
            env.close()
            return
        try:
            for attribute, value in attributes.items():
                setattr(env.unwrapped, attribute, value)
            mujoco.mj_setState(model, data, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
            mujoco.mj_forward(model, data)  # body and camera positions from the state
            reply = env.render()
        except Exception as error:  # the parent raises it
            reply = RuntimeError(f"{type(error).__name__}: {error}")
        pickle.dump(reply, replies)
        replies.flush()


class ChildProcessFrames(gym.Wrapper):
    """`env` (a MuJoCo env built without a render mode) with `render_mode="rgb_array"`: each
    `render()` is its current state drawn by `serve_frames` in a child process. `setup` runs in
    the child before it builds its env (pickled by value: nothing of rl); `copied_attributes` of
    the unwrapped env travel with each state."""

    def __init__(
        self,
        env: gym.Env,
        name: str,
        env_kwargs: dict[str, Any],
        setup: Callable[[], None] | None = None,
        copied_attributes: Sequence[str] = (),
    ) -> None:
        super().__init__(env)
        self.copied_attributes = tuple(copied_attributes)
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
        with children_ignore_stop_signals():  # the main process stops it (rl/utils/processes.py)
            self.child = subprocess.Popen(
                [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        serve = functools.partial(serve_frames, name, env_kwargs, setup)
        cloudpickle.dump(serve, self.child.stdin)
        self.child.stdin.flush()  # it builds its env while this process carries on

    @property
    def render_mode(self) -> str:
        return "rgb_array"

    def render(self) -> np.ndarray:
        import mujoco

        model, data = self.env.unwrapped.model, self.env.unwrapped.data
        kind = mujoco.mjtState.mjSTATE_FULLPHYSICS
        state = np.empty(mujoco.mj_stateSize(model, kind))
        mujoco.mj_getState(model, data, state, kind)
        attributes = {name: getattr(self.env.unwrapped, name) for name in self.copied_attributes}
        try:
            pickle.dump((state, attributes), self.child.stdin)
            self.child.stdin.flush()
            reply = pickle.load(self.child.stdout)
        except (BrokenPipeError, EOFError):
            status = self.child.wait()
            raise RuntimeError(
                f"the process drawing MuJoCo frames exited with status {status} (its stderr "
                "is above)"
            ) from None
        if isinstance(reply, Exception):
            raise reply
        return reply

    def close(self) -> None:
        if self.child.poll() is None:
            self.child.stdin.close()  # the child's end of file: it closes its env and exits
            try:
                self.child.wait(CLOSE_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.wait()
        self.child.stdout.close()
        super().close()
