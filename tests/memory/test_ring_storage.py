import numpy as np
import pytest

from rl.memory.ring_storage import RingStorage

FIELDS = {"obs": ((2,), np.float32), "action": ((), np.int64)}


def batch(values):
    values = np.asarray(values)
    return {
        "obs": np.stack([values, -values], axis=1).astype(np.float32),
        "action": values.astype(np.int64),
    }


def test_wraparound_indices_and_contents():
    storage = RingStorage(4, FIELDS)
    np.testing.assert_array_equal(storage.add_batch(batch([10, 11, 12])), [0, 1, 2])
    assert (storage.size, storage.next_index) == (3, 3)
    # 3 more rows into capacity 4: rows 3, then wrap to 0 and 1.
    indices = storage.add_batch(batch([13, 14, 15]))
    np.testing.assert_array_equal(indices, [3, 0, 1])
    assert indices.dtype == np.int64
    assert (storage.size, storage.next_index) == (4, 2)
    got = storage.gather(np.arange(4))
    np.testing.assert_array_equal(got["action"], [14, 15, 12, 13])
    np.testing.assert_array_equal(got["obs"][:, 1], [-14, -15, -12, -13])


def test_full_capacity_batch_and_exact_wrap():
    storage = RingStorage(3, FIELDS)
    np.testing.assert_array_equal(storage.add_batch(batch([1, 2, 3])), [0, 1, 2])
    assert storage.next_index == 0
    np.testing.assert_array_equal(storage.add_batch(batch([4, 5, 6])), [0, 1, 2])
    np.testing.assert_array_equal(storage.gather(np.arange(3))["action"], [4, 5, 6])


def test_gather_keeps_index_shape():
    storage = RingStorage(5, FIELDS)
    storage.add_batch(batch([0, 1, 2, 3, 4]))
    got = storage.gather(np.array([[4, 0], [1, 1], [3, 2]]))
    assert got["obs"].shape == (3, 2, 2)
    np.testing.assert_array_equal(got["action"], [[4, 0], [1, 1], [3, 2]])


def test_rejects_bad_batches():
    storage = RingStorage(2, FIELDS)
    with pytest.raises(ValueError, match="exceeds replay capacity 2"):
        storage.add_batch(batch([1, 2, 3]))
    with pytest.raises(ValueError, match="missing \\['action'\\]"):
        storage.add_batch({"obs": np.zeros((1, 2))})
    with pytest.raises(ValueError, match="'obs' has shape \\[1, 3\\]"):
        storage.add_batch({"obs": np.zeros((1, 3)), "action": np.zeros(1)})
    with pytest.raises(ValueError, match="'action' has shape \\[2\\], expected \\[1\\]"):
        storage.add_batch({"obs": np.zeros((1, 2)), "action": np.zeros(2)})
    assert storage.size == 0


def test_state_dict_saves_only_filled_rows_and_round_trips():
    storage = RingStorage(4, FIELDS)
    storage.add_batch(batch([7, 8]))
    state = storage.state_dict()
    assert state["field/obs"].shape == (2, 2)
    restored = RingStorage(4, FIELDS)
    restored.load_state_dict(state)
    assert (restored.size, restored.next_index) == (2, 2)
    np.testing.assert_array_equal(restored.gather(np.arange(2))["action"], [7, 8])
    with pytest.raises(ValueError, match="capacity 4 != this replay's capacity 5"):
        RingStorage(5, FIELDS).load_state_dict(state)
