import copy

import numpy as np
import pytest

from rl.memory import NStepAccumulator
from rl.types import VectorStep

FIELDS = {"obs": ((2,), np.float32), "action": ((), np.int64)}
KEYS = ("obs", "action", "reward", "next_obs", "discount")


def step(acc, t, rewards, terminated=(False, False), truncated=(False, False), valid=None):
    """Two envs; obs of env e at time t is [e, t], action 10e + t; next_obs is [e, t + 1], or
    the marker final obs [e, 100 + t] when env e's episode ends at t."""
    done = np.logical_or(terminated, truncated)
    obs = np.array([[0, t], [1, t]], dtype=np.float32)
    next_obs = np.array([[e, 100 + t if done[e] else t + 1] for e in range(2)], dtype=np.float32)
    return acc.add(
        VectorStep(
            obs=obs,
            action=np.array([t, 10 + t]),
            reward=np.array(rewards, dtype=np.float32),
            next_obs=next_obs,
            terminated=np.array(terminated),
            truncated=np.array(truncated),
        ),
        valid=None if valid is None else np.array(valid),
    )


def assert_rows(out, expected, rtol=1e-6, atol=0.0):
    """expected: list of (obs, action, reward, next_obs, discount) rows."""
    assert set(out) == set(KEYS)
    assert out["reward"].dtype == np.float32 and out["discount"].dtype == np.float32
    assert out["obs"].dtype == np.float32 and out["action"].dtype == np.int64
    assert len(out["action"]) == len(expected)
    for key, column in zip(
        KEYS, zip(*expected, strict=True) if expected else [[]] * 5, strict=True
    ):
        column = np.array(column).reshape(out[key].shape)
        np.testing.assert_allclose(out[key], column, rtol=rtol, atol=atol)


def test_n3_by_hand_termination_truncation_and_envs_ending_at_different_times():
    # n = 3, gamma = 0.9. Env 0: rewards 1, 2, 3, 4, terminated at t=3, then a new episode.
    # Env 1: rewards 10, 20, truncated at t=1; then 5, 6, 7 in its next episode.
    acc = NStepAccumulator(n=3, gamma=0.9, num_envs=2, fields=FIELDS)
    assert_rows(step(acc, 0, [1, 10]), [])
    # t=1, env 1 truncated: flush both pending steps, bootstrapping from the final obs
    # [1, 101] with gamma^m: R = 10 + 0.9*20 = 28 (m=2, 0.81); R = 20 (m=1, 0.9).
    out = step(acc, 1, [2, 20], truncated=(False, True))
    assert_rows(out, [([1, 0], 10, 28.0, [1, 101], 0.81), ([1, 1], 11, 20.0, [1, 101], 0.9)])
    # t=2, env 0 holds 3 steps: R = 1 + 0.9*2 + 0.81*3 = 5.23, next_obs = obs at t=3, 0.9^3.
    out = step(acc, 2, [3, 5])
    assert_rows(out, [([0, 0], 0, 5.23, [0, 3], 0.729)])
    # t=3, env 0 terminated: flush t=1..3 with discount 0 and the final obs [0, 103]:
    # 2 + 0.9*3 + 0.81*4 = 7.94; 3 + 0.9*4 = 6.6; 4.
    out = step(acc, 3, [4, 6], terminated=(True, False))
    assert_rows(
        out,
        [
            ([0, 1], 1, 7.94, [0, 103], 0.0),
            ([0, 2], 2, 6.6, [0, 103], 0.0),
            ([0, 3], 3, 4.0, [0, 103], 0.0),
        ],
    )
    # t=4: env 0 has 1 step of its new episode (nothing due); env 1 completes its t=2 step:
    # 5 + 0.9*6 + 0.81*7 = 16.07.
    out = step(acc, 4, [9, 7])
    assert_rows(out, [([1, 2], 12, 16.07, [1, 5], 0.729)])
    np.testing.assert_array_equal(acc.pending(), [1, 2])


def test_terminated_and_truncated_together_does_not_bootstrap():
    acc = NStepAccumulator(n=3, gamma=0.9, num_envs=2, fields=FIELDS)
    step(acc, 0, [1, 1])
    out = step(acc, 1, [1, 1], terminated=(True, False), truncated=(True, True))
    # env 0: terminated wins -> 0; env 1: truncated only -> gamma^m.
    np.testing.assert_allclose(out["discount"], [0.0, 0.0, 0.81, 0.9], rtol=1e-6)


def test_n1_is_the_plain_transition():
    rng = np.random.default_rng(0)
    num_envs, gamma = 3, 0.97
    acc = NStepAccumulator(n=1, gamma=gamma, num_envs=num_envs, fields=FIELDS)
    for _ in range(40):
        obs = rng.random((num_envs, 2)).astype(np.float32)
        next_obs = rng.random((num_envs, 2)).astype(np.float32)
        action = rng.integers(0, 5, num_envs)
        reward = rng.normal(size=num_envs).astype(np.float32)
        terminated = rng.random(num_envs) < 0.2
        truncated = rng.random(num_envs) < 0.2
        out = acc.add(VectorStep(obs, action, reward, next_obs, terminated, truncated))
        np.testing.assert_array_equal(out["obs"], obs)
        np.testing.assert_array_equal(out["action"], action)
        np.testing.assert_array_equal(out["reward"], reward)
        np.testing.assert_array_equal(out["next_obs"], next_obs)
        np.testing.assert_allclose(out["discount"], gamma * (1 - terminated), rtol=1e-7)


def test_flush_ends_every_episode_as_a_truncation():
    # n = 3, gamma = 0.9: two steps pending per env, bootstrapped from the latest next_obs
    # [e, 2]: env 0: 1 + 0.9*2 = 2.8 (0.81), 2 (0.9); env 1: 10 + 0.9*20 = 28 (0.81), 20 (0.9).
    acc = NStepAccumulator(n=3, gamma=0.9, num_envs=2, fields=FIELDS)
    step(acc, 0, [1, 10])
    step(acc, 1, [2, 20])
    assert_rows(
        acc.flush(),
        [
            ([0, 0], 0, 2.8, [0, 2], 0.81),
            ([0, 1], 1, 2.0, [0, 2], 0.9),
            ([1, 0], 10, 28.0, [1, 2], 0.81),
            ([1, 1], 11, 20.0, [1, 2], 0.9),
        ],
    )
    assert_rows(acc.flush(), [])
    np.testing.assert_array_equal(acc.pending(), [0, 0])


def test_invalid_env_steps_are_ignored():
    # Gymnasium's NEXT_STEP autoreset: the step after an episode end is a reset, not a transition.
    acc = NStepAccumulator(n=2, gamma=0.5, num_envs=2, fields=FIELDS)
    step(acc, 0, [1, 100])
    step(acc, 1, [99, 99], valid=(False, False))
    out = step(acc, 2, [3, 200], valid=(True, False))
    # env 0: steps t=0 and t=2 -> R = 1 + 0.5*3 = 2.5; env 1 still has only t=0 pending.
    assert_rows(out, [([0, 0], 0, 2.5, [0, 3], 0.25)])
    np.testing.assert_array_equal(acc.pending(), [1, 1])


def reference_n_step(steps, n, gamma, num_envs):
    """Straightforward per-env loop over (obs, action, reward, next_obs, term, trunc) steps."""
    pending = [[] for _ in range(num_envs)]
    emitted = []
    for obs, action, reward, next_obs, term, trunc in steps:
        rows = []
        for e in range(num_envs):
            pending[e].append((obs[e], action[e], reward[e]))
            done = term[e] or trunc[e]
            starts = range(len(pending[e])) if done else ([0] if len(pending[e]) == n else [])
            for j in starts:
                window = pending[e][j:]
                ret = sum(gamma**k * r for k, (_, _, r) in enumerate(window))
                disc = 0.0 if term[e] else gamma ** len(window)
                rows.append((window[0][0], window[0][1], ret, next_obs[e], disc))
            pending[e] = [] if done else pending[e][len(starts) :]
        emitted.append(rows)
    return emitted


def test_matches_reference_loop_on_random_episodes():
    rng = np.random.default_rng(1)
    num_envs, n, gamma = 4, 3, 0.9
    steps = []
    for _ in range(60):
        steps.append(
            (
                rng.random((num_envs, 2)).astype(np.float32),
                rng.integers(0, 9, num_envs),
                rng.normal(size=num_envs).astype(np.float32),
                rng.random((num_envs, 2)).astype(np.float32),
                rng.random(num_envs) < 0.1,
                rng.random(num_envs) < 0.1,
            )
        )
    acc = NStepAccumulator(n=n, gamma=gamma, num_envs=num_envs, fields=FIELDS)
    for args, expected in zip(steps, reference_n_step(steps, n, gamma, num_envs), strict=True):
        assert_rows(acc.add(VectorStep(*args)), expected, rtol=1e-5, atol=1e-6)


def test_state_dict_round_trips_through_npz(tmp_path):
    acc = NStepAccumulator(n=3, gamma=0.9, num_envs=2, fields=FIELDS)
    step(acc, 0, [1, 10])
    step(acc, 1, [2, 20], truncated=(False, True))
    step(acc, 2, [3, 30])  # pending windows: env 0 slid by one, env 1 restarted
    path = tmp_path / "n_step.npz"
    np.savez(path, **acc.state_dict())
    restored = NStepAccumulator(n=3, gamma=0.9, num_envs=2, fields=FIELDS)
    with np.load(path, allow_pickle=False) as data:
        restored.load_state_dict(dict(data))
    # Flushing right away uses the saved latest next_obs.
    a, b = copy.deepcopy(acc).flush(), copy.deepcopy(restored).flush()
    for key in KEYS:
        np.testing.assert_array_equal(a[key], b[key])
    for t, term in [(3, (False, False)), (4, (True, False)), (5, (False, True))]:
        a, b = step(acc, t, [t, -t], terminated=term), step(restored, t, [t, -t], terminated=term)
        for key in KEYS:
            np.testing.assert_array_equal(a[key], b[key])
    step(acc, 6, [1, 1])
    step(restored, 6, [1, 1])
    a, b = acc.flush(), restored.flush()
    for key in KEYS:
        np.testing.assert_array_equal(a[key], b[key])
    with pytest.raises(ValueError, match="n=2"):
        NStepAccumulator(n=2, gamma=0.9, num_envs=2, fields=FIELDS).load_state_dict(
            acc.state_dict()
        )


def test_rejects_wrong_shapes():
    acc = NStepAccumulator(n=3, gamma=0.9, num_envs=2, fields=FIELDS)
    with pytest.raises(ValueError, match="reward has shape \\[3\\], expected \\[2\\]"):
        acc.add(
            VectorStep(np.zeros((2, 2)), np.zeros(2), np.zeros(3), np.zeros((2, 2)), [0, 0], [0, 0])
        )
