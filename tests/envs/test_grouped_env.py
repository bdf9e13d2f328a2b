"""make_vector_env(..., num_workers=N): env copies split over N processes behave exactly like
the in-process SyncVectorEnv, a worker's failure is one WorkerError naming it, and closing
leaves no process behind."""

from __future__ import annotations

import numpy as np
import pytest
from process_tools import alive

from rl.envs import make_vector_env
from rl.envs.grouped_env import merge_vector_infos
from rl.errors import UserError, WorkerError


@pytest.mark.e2e  # env worker processes
def test_two_workers_step_exactly_like_the_sync_env():
    sync, sync_spec = make_vector_env("CartPole-v1", 4, 7, max_episode_steps=25)
    grouped, grouped_spec = make_vector_env(
        "CartPole-v1", 4, 7, max_episode_steps=25, num_workers=2
    )
    processes = grouped.processes
    try:
        assert grouped_spec == sync_spec and grouped.num_envs == 4
        assert len(processes) == 2 and all(p.is_alive() for p in processes)
        np.testing.assert_array_equal(sync.reset(seed=11)[0], grouped.reset(seed=11)[0])
        rng = np.random.default_rng(0)
        episode_ends = 0
        for _ in range(120):
            action = rng.integers(0, 2, 4)
            expected, got = sync.step(action), grouped.step(action)
            names = ("obs", "reward", "terminated", "truncated")
            for name, a, b in zip(names, expected[:4], got[:4], strict=True):
                np.testing.assert_array_equal(a, b, err_msg=name)
                assert a.dtype == b.dtype, name
            info, grouped_info = expected[4], got[4]
            if "_final_obs" in info:
                episode_ends += int(info["_final_obs"].sum())
                np.testing.assert_array_equal(info["_final_obs"], grouped_info["_final_obs"])
                for i in np.flatnonzero(info["_final_obs"]):
                    final, grouped_final = info["final_obs"][i], grouped_info["final_obs"][i]
                    np.testing.assert_array_equal(final, grouped_final)
        assert episode_ends >= 4  # time limit 25 over 120 steps: every copy ended episodes
    finally:
        sync.close()
        grouped.close()
    assert not any(alive(p.pid) for p in processes)


@pytest.mark.e2e  # env worker processes
def test_a_failing_env_worker_is_one_error_naming_it(monkeypatch):
    monkeypatch.setenv("RL_TEST_RAISE_AFTER", "3")  # inherited by the spawned workers
    env, _ = make_vector_env("tests.workers.raising_env:RaisingCartPole", 4, 0, num_workers=2)
    processes = env.processes
    try:
        for _ in range(3):
            env.step(np.zeros(4, np.int64))
        with pytest.raises(WorkerError) as failure:
            env.step(np.zeros(4, np.int64))
        message = str(failure.value)
        assert "\n" not in message
        assert message.startswith("env worker 0 (env copies 0-1) failed: RuntimeError: ")
        assert "injected failure after 3 steps" in message
    finally:
        env.close()
    assert not any(alive(p.pid) for p in processes)


def test_env_copies_must_split_evenly():
    with pytest.raises(UserError, match="num_envs=3 .* 2 worker processes"):
        make_vector_env("CartPole-v1", 3, 0, num_workers=2)


def test_merge_vector_infos_concatenates_groups_and_fills_missing_keys():
    final = np.array([None, np.ones(2)], dtype=object)
    infos = [
        {"final_obs": final, "_final_obs": np.array([False, True]), "x": {"y": np.array([1, 2])}},
        {},
    ]
    merged = merge_vector_infos(infos, group_size=2)
    assert merged["_final_obs"].tolist() == [False, True, False, False]
    assert merged["final_obs"][1].tolist() == [1.0, 1.0] and merged["final_obs"][3] is None
    assert merged["x"]["y"].tolist() == [1, 2, 0, 0]
