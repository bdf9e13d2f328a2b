"""A Fetch task's frames, drawn in the child process that draws every MuJoCo env's frames: the
child registers gymnasium-robotics itself and draws the goal where the simulated episode has it."""

from __future__ import annotations

import os

import numpy as np
import pytest

from rl.envs import make_vector_env

pytest.importorskip("gymnasium_robotics")


def test_frames_follow_the_state_and_the_goal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where MuJoCo's default handler would write MUJOCO_LOG.TXT
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL"):
        monkeypatch.delenv(name, raising=False)
    vec_env, spec = make_vector_env(
        "FetchReach-v4", 1, seed=0, env_kwargs={"render_mode": "rgb_array"}
    )
    env = vec_env.envs[0]
    try:
        env.reset(seed=0)
        unwrapped = env.unwrapped
        first = env.render()
        assert first.shape == (480, 480, 3) and first.std() > 20  # a picture, not a blank
        np.testing.assert_array_equal(env.render(), first)  # the same state draws the same
        goal = unwrapped.goal.copy()
        unwrapped.goal = goal + np.array([0.0, 0.15, 0.0])  # the marker moves, nothing else
        moved = env.render()
        assert not np.array_equal(moved, first)
        unwrapped.goal = goal
        np.testing.assert_array_equal(env.render(), first)
        env.step(np.ones(spec.action_shape, np.float32))  # the gripper moves
        assert not np.array_equal(env.render(), first)
    finally:
        vec_env.close()
    assert os.listdir(tmp_path) == []  # no MUJOCO_LOG.TXT
