import numpy as np
import pytest

from rl.memory import PrioritizedReplay
from rl.registry import get_memory

FIELDS = {"obs": ((2,), np.float32), "action": ((), np.int64)}


def batch(values):
    values = np.asarray(values)
    return {
        "obs": np.stack([values, values], axis=1).astype(np.float32),
        "action": values.astype(np.int64),
    }


def replay_with(priorities, alpha=1.0, epsilon=0.0, seed=0, capacity=None):
    replay = PrioritizedReplay(
        capacity=capacity or len(priorities), fields=FIELDS, seed=seed, alpha=alpha, epsilon=epsilon
    )
    replay.add_batch(batch(np.arange(len(priorities))))
    replay.update_priorities(np.arange(len(priorities)), np.asarray(priorities, dtype=float))
    return replay


def frequencies(replay, size):
    indices = replay.sample(batch_size=1000, num_batches=200)["indices"]  # 200k draws
    return np.bincount(indices.ravel(), minlength=size) / indices.size


def test_registered_under_prioritized():
    assert get_memory("prioritized") is PrioritizedReplay


def test_sampling_frequency_proportional_to_priority():
    # alpha = 1: P(i) = p_i / sum p = [1, 2, 3, 4] / 10.
    replay = replay_with([1.0, 2.0, 3.0, 4.0], alpha=1.0)
    np.testing.assert_allclose(frequencies(replay, 4), [0.1, 0.2, 0.3, 0.4], atol=0.01)


def test_alpha_and_epsilon_are_applied():
    # alpha = 0.5: stored (|delta| + eps)^0.5 = [1, 2, 3, 4] for |delta| + eps = [1, 4, 9, 16];
    # negative TD errors count by their absolute value.
    replay = replay_with([0.5, -3.5, 8.5, 15.5], alpha=0.5, epsilon=0.5)
    np.testing.assert_allclose(replay.get_priorities(np.arange(4)), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(frequencies(replay, 4), [0.1, 0.2, 0.3, 0.4], atol=0.01)


def test_alpha_given_at_an_update_applies_to_it_and_later_ones():
    # A per_alpha schedule: the agent passes alpha at each update. Rows 0-1 are updated with
    # alpha 1 ((|delta| + 0.5)^1 = [4, 9]), rows 2-3 later with alpha 0.5 ([16, 25]^0.5 = [4, 5]);
    # rows 0-1 keep their priorities until they are updated again.
    replay = replay_with([1.0, 1.0, 1.0, 1.0], alpha=1.0, epsilon=0.5)
    replay.update_priorities(np.array([0, 1]), np.array([3.5, 8.5]), alpha=1.0)
    replay.update_priorities(np.array([2, 3]), np.array([15.5, -24.5]), alpha=0.5)
    assert replay.alpha == 0.5
    np.testing.assert_allclose(replay.get_priorities(np.arange(4)), [4.0, 9.0, 4.0, 5.0])
    replay.update_priorities(np.array([1]), np.array([3.5]))  # no alpha: the current one, 0.5
    np.testing.assert_allclose(replay.get_priorities(np.arange(4)), [4.0, 2.0, 4.0, 5.0])
    # P(i) = p_i / 15
    np.testing.assert_allclose(frequencies(replay, 4), np.array([4, 2, 4, 5]) / 15, atol=0.01)
    with pytest.raises(ValueError, match="alpha and epsilon must be >= 0"):
        replay.update_priorities(np.array([0]), np.array([1.0]), alpha=-0.1)


def test_importance_weights_by_hand():
    # p = [1, 2, 3, 4], N = 4, P = [0.1, 0.2, 0.3, 0.4], beta = 0.5:
    # (N P)^-beta = [0.4, 0.8, 1.2, 1.6]^-0.5 = [1.5811, 1.1180, 0.9129, 0.7906];
    # divided by the max weight 1.5811 (from p_min = 1): [1, 0.7071, 0.5774, 0.5].
    replay = replay_with([1.0, 2.0, 3.0, 4.0], alpha=1.0)
    out = replay.sample(batch_size=32, num_batches=4, beta=0.5)
    expected = np.array([1.0, 0.70710678, 0.57735027, 0.5], dtype=np.float32)
    assert out["weights"].dtype == np.float32 and out["weights"].shape == (4, 32)
    np.testing.assert_allclose(out["weights"], expected[out["indices"]], rtol=1e-6)
    # beta = 0: no correction.
    np.testing.assert_array_equal(replay.sample(8, 2, beta=0.0)["weights"], np.ones((2, 8)))


def test_sample_shapes_and_data_match_indices():
    replay = replay_with([1.0, 5.0, 2.0], alpha=0.6, epsilon=1e-6, capacity=10)
    out = replay.sample(batch_size=7, num_batches=5)
    assert out["obs"].shape == (5, 7, 2) and out["action"].shape == (5, 7)
    assert out["indices"].dtype == np.int64
    assert out["indices"].min() >= 0 and out["indices"].max() < 3  # never an unfilled row
    np.testing.assert_array_equal(out["action"], out["indices"])
    assert np.all(out["weights"] > 0) and np.all(out["weights"] <= 1)


def test_batches_are_shuffled_across_the_strata():
    # Without the shuffle, batch 0 would hold only the low-prefix rows (all index 0 here).
    replay = replay_with([1.0, 1.0, 1.0, 1.0], alpha=1.0)
    indices = replay.sample(batch_size=10, num_batches=4)["indices"]
    assert all(len(np.unique(row)) > 1 for row in indices)


def test_new_items_get_max_priority_seen_so_far():
    replay = PrioritizedReplay(capacity=8, fields=FIELDS, seed=0, alpha=1.0, epsilon=0.0)
    replay.add_batch(batch([0, 1]))
    np.testing.assert_array_equal(replay.get_priorities(np.arange(2)), [1.0, 1.0])  # initial 1
    replay.update_priorities(np.array([0, 1]), np.array([5.0, 0.5]))
    replay.update_priorities(np.array([0]), np.array([0.1]))  # the max seen stays 5
    replay.add_batch(batch([2, 3]))
    np.testing.assert_allclose(replay.get_priorities(np.arange(4)), [0.1, 0.5, 5.0, 5.0])
    assert replay.max_priority == 5.0
    # Explicit initial priorities (Ape-X actors) are stored like updates.
    replay.add_batch(batch([4]), priorities=np.array([-2.0]))
    np.testing.assert_allclose(replay.get_priorities(np.array([4])), [2.0])


def test_update_priorities_changes_frequencies():
    replay = PrioritizedReplay(capacity=4, fields=FIELDS, seed=0, alpha=1.0, epsilon=0.0)
    replay.add_batch(batch(np.arange(4)))
    np.testing.assert_allclose(frequencies(replay, 4), [0.25] * 4, atol=0.01)
    # Stored [7, 1, 1, 1]; duplicates in one call keep the last value (7, not 100).
    replay.update_priorities(np.array([[0, 0]]), np.array([[100.0, 7.0]]))
    np.testing.assert_allclose(frequencies(replay, 4), [0.7, 0.1, 0.1, 0.1], atol=0.01)


def test_bad_priorities_raise():
    replay = replay_with([1.0, 2.0], alpha=1.0)
    with pytest.raises(ValueError, match="finite"):
        replay.update_priorities(np.array([0]), np.array([np.nan]))
    with pytest.raises(ValueError, match="epsilon > 0"):
        replay.update_priorities(np.array([0]), np.array([0.0]))
    with pytest.raises(ValueError, match="in \\[0, 2\\)"):
        replay.update_priorities(np.array([2]), np.array([1.0]))
    with pytest.raises(ValueError, match="2 indices but 1 priorities"):
        replay.update_priorities(np.array([0, 1]), np.array([1.0]))
    with pytest.raises(ValueError, match="priorities has 2 values"):
        replay.add_batch(batch([5]), priorities=np.array([1.0, 2.0]))
    assert replay.size == 2
    with pytest.raises(ValueError, match="empty replay"):
        PrioritizedReplay(capacity=2, fields=FIELDS, seed=0).sample(1)


@pytest.mark.parametrize("num_added", [5, 13])  # partly filled, and wrapped around
def test_state_dict_round_trips_through_npz(tmp_path, num_added):
    rng = np.random.default_rng(0)
    replay = PrioritizedReplay(capacity=8, fields=FIELDS, seed=3, alpha=0.6)
    for chunk in np.array_split(np.arange(num_added), 2):
        replay.add_batch(batch(chunk))
    out = replay.sample(4, 2)
    replay.update_priorities(out["indices"], rng.random((2, 4)) * 3)
    path = tmp_path / "per.npz"
    np.savez(path, **replay.state_dict())
    with np.load(path, allow_pickle=False) as data:
        state = dict(data)

    restored = PrioritizedReplay(capacity=8, fields=FIELDS, seed=99, alpha=0.6)
    restored.load_state_dict(state)
    assert restored.max_priority == replay.max_priority
    for _ in range(3):
        a, b = replay.sample(6, 3, beta=0.7), restored.sample(6, 3, beta=0.7)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
        td = rng.random((3, 6))
        replay.update_priorities(a["indices"], td)
        restored.update_priorities(b["indices"], td)
    replay.add_batch(batch([1]))
    restored.add_batch(batch([1]))
    np.testing.assert_array_equal(
        replay.get_priorities(np.arange(replay.size)),
        restored.get_priorities(np.arange(restored.size)),
    )
    # alpha and epsilon may follow schedules: the checkpoint's (those the stored priorities
    # were made with) are adopted.
    other = PrioritizedReplay(capacity=8, fields=FIELDS, seed=0, alpha=0.5, epsilon=0.1)
    other.load_state_dict(state)
    assert (other.alpha, other.epsilon) == (0.6, 1e-6)
