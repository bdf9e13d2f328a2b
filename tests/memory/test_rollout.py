"""RolloutBuffer: what is stored per step, truncation bookkeeping, episode cuts, checkpoints."""

import numpy as np
import pytest

from rl import registry
from rl.memory import RolloutBuffer
from rl.types import VectorStep


def make_buffer(num_steps=3, num_envs=2):
    return RolloutBuffer(num_steps, num_envs, (2,), np.float32, (), np.int64)


def step(buffer, t, terminated=(False, False), truncated=(False, False)):
    obs = np.full((2, 2), t, np.float32) + np.array([[0.0], [0.5]], np.float32)
    buffer.add(
        VectorStep(
            obs=obs,
            action=np.array([t, t + 1]),
            reward=np.array([1.0, 2.0], np.float32),
            next_obs=obs + 10.0,
            terminated=np.array(terminated),
            truncated=np.array(truncated),
        ),
        log_prob=np.array([-0.5, -0.7], np.float32),
        value=np.array([3.0, 4.0], np.float32),
    )


def test_registered_as_rollout():
    assert registry.get_memory("rollout") is RolloutBuffer


def test_stores_steps_time_major_and_final_obs_only_at_truncation():
    buffer = make_buffer()
    step(buffer, 0)
    # Env 1 truncated at t=1; env 0 both terminated and truncated: termination wins (no value
    # after a terminal state), so it is not marked truncated and keeps no final_obs.
    step(buffer, 1, terminated=(True, False), truncated=(True, True))
    assert len(buffer) == 2 and not buffer.full()
    data = buffer.data()
    assert data["obs"].shape == (3, 2, 2) and data["action"].shape == (3, 2)
    np.testing.assert_array_equal(data["action"][:2], [[0, 1], [1, 2]])
    np.testing.assert_array_equal(data["terminated"][1], [True, False])
    np.testing.assert_array_equal(data["truncated"][1], [False, True])
    np.testing.assert_array_equal(data["final_obs"][1, 1], [11.5, 11.5])  # obs 1.5 + 10
    np.testing.assert_array_equal(data["final_obs"][1, 0], [0.0, 0.0])
    np.testing.assert_array_equal(data["final_obs"][0], np.zeros((2, 2)))
    np.testing.assert_array_equal(data["last_next_obs"], [[11.0, 11.0], [11.5, 11.5]])
    step(buffer, 2)
    assert buffer.full()
    with pytest.raises(RuntimeError, match="full"):
        step(buffer, 3)
    buffer.reset()
    assert len(buffer) == 0 and not buffer.data()["truncated"].any()


def test_optional_log_prob_and_value_default_to_zero():
    buffer = make_buffer(1, 2)
    obs = np.zeros((2, 2), np.float32)
    zeros = np.zeros(2)
    buffer.add(VectorStep(obs, np.array([0, 1]), np.zeros(2, np.float32), obs, zeros, zeros))
    np.testing.assert_array_equal(buffer.data()["log_prob"], [[0.0, 0.0]])


def test_truncate_all_cuts_running_episodes_at_the_latest_step():
    buffer = make_buffer()
    buffer.truncate_all()  # empty: nothing to do
    step(buffer, 0)
    step(buffer, 1, terminated=(True, False))
    buffer.truncate_all()
    data = buffer.data()
    # Env 0 already terminated at t=1 (stays a termination); env 1 is cut and bootstraps from
    # its latest next_obs.
    np.testing.assert_array_equal(data["truncated"][1], [False, True])
    np.testing.assert_array_equal(data["final_obs"][1, 1], [11.5, 11.5])
    assert not data["truncated"][0].any()


def test_state_dict_round_trip_and_shape_check():
    buffer = make_buffer()
    step(buffer, 0)
    step(buffer, 1, truncated=(False, True))
    state = buffer.state_dict()
    other = make_buffer()
    other.load_state_dict(state)
    assert len(other) == 2
    for key, value in buffer.data().items():
        np.testing.assert_array_equal(other.data()[key], value)
    with pytest.raises(ValueError, match="obs"):
        make_buffer(num_steps=4).load_state_dict(state)


def test_wrong_shape_is_refused():
    buffer = make_buffer()
    with pytest.raises(ValueError, match="reward"):
        buffer.add(
            VectorStep(
                np.zeros((2, 2)),
                np.zeros(2),
                np.zeros(3),
                np.zeros((2, 2)),
                np.zeros(2),
                np.zeros(2),
            )
        )
