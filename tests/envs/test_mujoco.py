"""gymnasium's MuJoCo envs as rl/envs/mujoco.py builds them: no MUJOCO_LOG.TXT, float32
observations, clipped actions, the 1000-step time limit a truncation and a fall a termination,
and videos without a display (the OpenGL backend chosen, frames drawn beside TensorFlow)."""

from __future__ import annotations

import logging
import os
import sys

import gymnasium as gym
import imageio.v3 as iio
import mujoco
import numpy as np
import pytest

from rl import registry
from rl.envs import make_vector_env
from rl.envs import mujoco as rl_mujoco
from rl.envs.mujoco import GYMNASIUM_MODEL_DEPRECATION, is_mujoco_id, log_mujoco_warning
from rl.errors import UserError
from rl.utils.video import VideoRecorder, play_episode

LOG_FILE = "MUJOCO_LOG.TXT"
# The env of every MuJoCo hparams set (rl/hparams/mujoco.py): each one is filmed below.
HPARAMS_ENVS = {registry.get_hparams(name)().env for name in registry.hparams.names()}
MUJOCO_ENVS = sorted(env for env in HPARAMS_ENVS if is_mujoco_id(env))
DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL")


@pytest.fixture
def mujoco_default_handler():
    """MuJoCo's own warning handler for the test (another test may have installed ours), and
    ours again afterwards so no later test in this process writes the file."""
    mujoco.set_mju_user_warning(None)
    yield
    mujoco.set_mju_user_warning(log_mujoco_warning)


@pytest.fixture
def mujoco_records():
    """The records of logger `rl.envs.mujoco`, every level, kept from the handlers above it (a
    train.main in an earlier test may have given `rl` its stderr handler)."""
    logger = logging.getLogger("rl.envs.mujoco")
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    level, propagate = logger.level, logger.propagate
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    logger.addHandler(handler)
    yield records
    logger.removeHandler(handler)
    logger.setLevel(level)
    logger.propagate = propagate


def test_a_mujoco_env_leaves_no_log_file_and_logs_the_warning(
    mujoco_default_handler, mujoco_records, tmp_path, monkeypatch, capfd
):
    monkeypatch.chdir(tmp_path)
    # The control: MuJoCo's default handler writes the file into the current directory...
    gym.make("HalfCheetah-v5").close()
    assert (tmp_path / LOG_FILE).is_file()
    assert GYMNASIUM_MODEL_DEPRECATION in capfd.readouterr().err
    (tmp_path / LOG_FILE).unlink()
    # ... ours does not, and sends the warning to logging instead (DEBUG: gymnasium's model).
    env, _ = make_vector_env("HalfCheetah-v5", 2, seed=0)
    env.close()
    assert not (tmp_path / LOG_FILE).exists()
    assert capfd.readouterr().err == ""
    assert len(mujoco_records) == 2  # one per env copy
    assert {r.levelno for r in mujoco_records} == {logging.DEBUG}
    assert GYMNASIUM_MODEL_DEPRECATION in mujoco_records[0].getMessage()


def test_other_mujoco_warnings_are_logged_as_warnings(mujoco_records):
    log_mujoco_warning("Nan, Inf or huge value in QACC at DOF 0. The simulation is unstable.")
    assert [r.levelno for r in mujoco_records] == [logging.WARNING]


def test_halfcheetah_is_truncated_at_its_1000_step_time_limit():
    env, spec = make_vector_env("HalfCheetah-v5", 1, seed=0)
    assert spec.obs_shape == (17,) and spec.obs_dtype == np.float32
    assert spec.action_shape == (6,) and spec.max_episode_steps == 1000
    np.testing.assert_array_equal(spec.action_low, -1.0)
    np.testing.assert_array_equal(spec.action_high, 1.0)
    action = np.zeros((1, 6), np.float32)
    for step in range(1, 1001):
        obs, _, terminated, truncated, info = env.step(action)
        assert obs.dtype == np.float32
        assert not terminated[0]  # HalfCheetah never falls
        assert truncated[0] == (step == 1000), step
    assert info["final_obs"][0].dtype == np.float32  # the true last state, to bootstrap from
    env.close()


def test_a_falling_hopper_terminates_before_the_time_limit():
    env, spec = make_vector_env("Hopper-v5", 1, seed=0)
    assert (spec.obs_shape, spec.action_shape) == ((11,), (3,))
    rng = np.random.default_rng(0)
    steps, terminated, truncated = 0, [False], [False]
    while not (terminated[0] or truncated[0]):
        action = rng.uniform(-1.0, 1.0, (1, 3)).astype(np.float32)
        _, _, terminated, truncated, _ = env.step(action)
        steps += 1
    assert terminated[0] and not truncated[0] and steps < 1000, steps
    env.close()


def test_actions_beyond_the_bounds_act_and_cost_as_the_bounds():
    # HalfCheetah's reward is forward progress minus 0.1 * |action|^2: unclipped, action 3
    # would cost 9x what action 1 costs (0.1 * 6 * 9 = 5.4 per step instead of 0.6).
    steps = {}
    for value in (1.0, 3.0):
        env, _ = make_vector_env("HalfCheetah-v5", 1, seed=0)
        steps[value] = env.step(np.full((1, 6), value, np.float32))
        env.close()
    np.testing.assert_array_equal(steps[3.0][0], steps[1.0][0])  # the same next state
    np.testing.assert_array_equal(steps[3.0][1], steps[1.0][1])  # and the same reward


@pytest.mark.parametrize(
    "platform, environ, loadable, expected",
    [
        ("linux", {}, {"EGL", "OSMesa"}, "egl"),  # no display: EGL first
        ("linux", {}, {"OSMesa"}, "osmesa"),  # else OSMesa
        ("linux", {}, set(), None),  # neither: nothing to choose, and no frames asked for
        ("linux", {"DISPLAY": ":0"}, {"EGL"}, None),  # a display: MuJoCo's GLFW works
        ("linux", {"WAYLAND_DISPLAY": "wayland-0"}, {"EGL"}, None),
        ("linux", {"MUJOCO_GL": "osmesa"}, {"EGL"}, "osmesa"),  # the user's own is kept
        ("darwin", {}, {"EGL"}, None),  # macOS: MuJoCo's CGL/GLFW work
    ],
)
def test_mujoco_gl_is_chosen_only_without_a_display_and_a_users_own(
    platform, environ, loadable, expected, monkeypatch
):
    monkeypatch.setattr(sys, "platform", platform)
    for name in DISPLAY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    rl_mujoco.choose_mujoco_gl(rendering=False, library_loads=loadable.__contains__)
    assert os.environ.get("MUJOCO_GL") == expected


def test_rendering_without_egl_or_osmesa_is_one_line_naming_what_to_install(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    for name in DISPLAY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UserError) as error:
        rl_mujoco.choose_mujoco_gl(rendering=True, library_loads=lambda name: False)
    message = str(error.value)
    assert "\n" not in message and "without a display" in message
    assert "libegl1" in message and "libosmesa6" in message and "MUJOCO_GL" in message
    assert "MUJOCO_GL" not in os.environ


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux library names")
def test_opengl_library_probe_loads_what_exists():
    assert rl_mujoco.opengl_library_loads("c")  # libc.so is a linker script; libc.so.6 loads
    assert not rl_mujoco.opengl_library_loads("no-such-opengl")


@pytest.mark.parametrize("env_id", MUJOCO_ENVS)
def test_video_of_a_mujoco_env_without_a_display(env_id, tmp_path, monkeypatch):
    """What --record_video does on a server: frames in a process that imported TensorFlow, with
    MUJOCO_GL unset, written to mp4 and decoded back."""
    monkeypatch.chdir(tmp_path)  # where MuJoCo's default handler would write MUJOCO_LOG.TXT
    for name in DISPLAY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    vec_env, spec = make_vector_env(env_id, 1, seed=0, env_kwargs={"render_mode": "rgb_array"})
    rng = np.random.default_rng(0)

    def random_policy(obs: np.ndarray) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, (len(obs), *spec.action_shape))

    steps = 3
    try:
        episode = play_episode(vec_env.envs[0], random_policy, seed=0, max_steps=steps)
    finally:
        vec_env.close()
    assert not np.array_equal(episode.frames[0], episode.frames[-1])  # each state is drawn
    path = VideoRecorder(str(tmp_path / "videos")).record_episode(episode.frames, 0, 0, "test")
    video = np.stack(list(iio.imiter(path, plugin="FFMPEG")))
    assert video.shape == (steps + 1, 480, 480, 3)  # gymnasium's MuJoCo frame size
    assert video.std(axis=(1, 2, 3)).min() > 20  # no blank frame (a blank one has std 0)
    assert os.listdir(tmp_path) == ["videos"]  # and no MUJOCO_LOG.TXT
