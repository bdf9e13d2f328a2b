"""gymnasium's MuJoCo envs as rl/envs/mujoco.py builds them: no MUJOCO_LOG.TXT, float32
observations, clipped actions, the 1000-step time limit a truncation and a fall a termination."""

from __future__ import annotations

import logging

import gymnasium as gym
import mujoco
import numpy as np
import pytest

from rl.envs import make_vector_env
from rl.envs.mujoco import GYMNASIUM_MODEL_DEPRECATION, log_mujoco_warning

LOG_FILE = "MUJOCO_LOG.TXT"


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
