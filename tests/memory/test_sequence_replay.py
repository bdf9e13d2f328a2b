"""Sequence replay with burn-in: items worked out by hand (the module docstring's picture)."""

import numpy as np
import pytest

from rl.memory.sequence_replay import SequenceBuilder, SequenceReplay
from rl.types import VectorStep

GAMMA = 0.9


def builder(num_envs=1, length=4, burn_in=2):
    return SequenceBuilder(num_envs, length, burn_in, (1,), np.float32, 1, GAMMA)


def step(b, t, terminated=False, truncated=False, envs=1):
    """Feeds `b` (a builder or a replay) env step t of every env: obs t, action t % 2,
    reward t, state 10 t, next obs t + 1."""
    ones = np.ones(envs)
    return b.add(
        VectorStep(
            obs=(t * ones)[:, None],
            action=(t % 2 * ones).astype(np.int64),
            reward=(t * ones).astype(np.float32),
            next_obs=((t + 1) * ones)[:, None],
            terminated=np.full(envs, terminated),
            truncated=np.full(envs, truncated),
        ),
        state=(10 * t * ones)[:, None],
    )


def test_items_of_a_13_step_episode_by_hand():
    b = builder()
    items = [step(b, t, terminated=t == 12) for t in range(13)]
    emitted = {t: item for t, item in enumerate(items) if len(item["burn_in"])}
    # Windows of 4 learning steps: full after steps 3, 7, 11; the episode ends at step 12.
    assert sorted(emitted) == [3, 7, 11, 12]
    first, second, last = emitted[3], emitted[7], emitted[12]
    # Item 1: steps 0-3, no burn-in (the episode's zero start state is exact), padded by 2.
    np.testing.assert_array_equal(first["obs"][0, :, 0], [0, 1, 2, 3, 4, 0, 0])
    np.testing.assert_array_equal(first["mask"][0], [1, 1, 1, 1, 0, 0])
    assert first["burn_in"][0] == 0 and first["state"][0, 0] == 0
    # Item 2: burn-in steps 2-3, learning steps 4-7; it starts from the state of step 2.
    np.testing.assert_array_equal(second["obs"][0, :, 0], [2, 3, 4, 5, 6, 7, 8])
    np.testing.assert_array_equal(second["action"][0], [0, 1, 0, 1, 0, 1])
    np.testing.assert_array_equal(second["reward"][0], [2, 3, 4, 5, 6, 7])
    np.testing.assert_array_equal(second["mask"][0], [0, 0, 1, 1, 1, 1])
    np.testing.assert_allclose(second["discount"][0], [GAMMA] * 6)
    assert second["burn_in"][0] == 2 and second["state"][0, 0] == 20
    # Item 3: burn-in 6-7, learning 8-11.
    np.testing.assert_array_equal(emitted[11]["obs"][0, :, 0], [6, 7, 8, 9, 10, 11, 12])
    # Item 4: burn-in 10-11, learns step 12 alone, whose termination zeroes the discount; the
    # observation after it (13, the true final one) closes the sequence.
    np.testing.assert_array_equal(last["obs"][0, :, 0], [10, 11, 12, 13, 0, 0, 0])
    np.testing.assert_array_equal(last["mask"][0], [0, 0, 1, 0, 0, 0])
    np.testing.assert_allclose(last["discount"][0], [GAMMA, GAMMA, 0, 0, 0, 0])
    assert last["state"][0, 0] == 100
    # Every step 0..12 is learned exactly once.
    learned = np.concatenate(
        [item["obs"][0, :6, 0][item["mask"][0] > 0] for item in emitted.values()]
    )
    np.testing.assert_array_equal(np.sort(learned), np.arange(13))


def test_a_truncated_episode_keeps_its_discount_and_the_next_episode_starts_fresh():
    b = builder()
    for t in range(2):
        step(b, t)
    item = step(b, 2, truncated=True)  # the time limit ends the episode after 3 steps
    np.testing.assert_array_equal(item["mask"][0], [1, 1, 1, 0, 0, 0])
    np.testing.assert_allclose(item["discount"][0, :3], [GAMMA] * 3)  # bootstraps from obs 3
    assert item["obs"][0, 3, 0] == 3
    for t in range(3):  # the new episode's first window has no burn-in again
        step(b, 100 + t)
    item = step(b, 103)
    assert item["burn_in"][0] == 0
    np.testing.assert_array_equal(item["obs"][0, :5, 0], [100, 101, 102, 103, 104])


def test_flush_cuts_partial_windows_as_truncations():
    b = builder()
    for t in range(6):  # window 1 (steps 0-3) emitted; burn-in 2-3 and steps 4-5 pending
        step(b, t)
    (item,) = [b.flush()]
    np.testing.assert_array_equal(item["obs"][0, :, 0], [2, 3, 4, 5, 6, 0, 0])
    np.testing.assert_array_equal(item["mask"][0], [0, 0, 1, 1, 0, 0])
    np.testing.assert_allclose(item["discount"][0, :4], [GAMMA] * 4)
    assert len(b.flush()["burn_in"]) == 0  # nothing left: a second cut emits nothing


def test_envs_are_independent():
    b = SequenceBuilder(2, 2, 1, (1,), np.float32, 1, GAMMA)
    out = b.add(
        VectorStep(
            obs=np.array([[0.0], [50.0]]),
            action=np.array([0, 1]),
            reward=np.zeros(2, np.float32),
            next_obs=np.array([[1.0], [51.0]]),
            terminated=np.array([False, True]),
            truncated=np.array([False, False]),
        ),
        state=np.zeros([2, 1]),
    )
    np.testing.assert_array_equal(out["obs"][:, :2, 0], [[50, 51]])  # only env 1 ended
    out = b.add(
        VectorStep(
            obs=np.array([[1.0], [0.0]]),
            action=np.array([1, 1]),
            reward=np.zeros(2, np.float32),
            next_obs=np.array([[2.0], [1.0]]),
            terminated=np.array([False, False]),
            truncated=np.array([False, False]),
        ),
        state=np.zeros([2, 1]),
    )
    np.testing.assert_array_equal(out["obs"][:, :3, 0], [[0, 1, 2]])  # env 0's full window


@pytest.mark.parametrize("prioritized", [False, True])
def test_checkpoint_round_trip_continues_identically(prioritized):
    def make():
        return SequenceReplay(
            50, 1, 4, 2, (1,), np.float32, 1, GAMMA, seed=7, prioritized=prioritized
        )

    a = make()
    for t in range(10):
        step(a, t)  # SequenceReplay.add takes the builder's arguments
    b = make()
    b.load_state_dict({k: np.array(v) for k, v in a.state_dict().items()})
    for replay in (a, b):
        for t in range(10, 14):
            step(replay, t, terminated=t == 13)
    assert len(a) == len(b) == 4
    sample_a, sample_b = a.sample(3, 2), b.sample(3, 2)
    for key in sample_a:
        np.testing.assert_array_equal(sample_a[key], sample_b[key], err_msg=key)
    assert sample_a["obs"].shape == (2, 3, 7, 1)
