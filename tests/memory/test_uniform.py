import numpy as np
import pytest

from rl.memory import UniformReplay
from rl.registry import get_memory

FIELDS = {"obs": ((3,), np.float32), "action": ((), np.int64), "reward": ((), np.float32)}


def batch(values):
    values = np.asarray(values)
    return {
        "obs": np.repeat(values[:, None], 3, axis=1).astype(np.float32),
        "action": values.astype(np.int64),
        "reward": (values * 0.5).astype(np.float32),
    }


def test_registered_under_uniform():
    assert get_memory("uniform") is UniformReplay


def test_sample_shapes_and_only_filled_rows():
    replay = UniformReplay(capacity=100, fields=FIELDS, seed=0)
    replay.add_batch(batch(np.arange(5) + 40))
    out = replay.sample(batch_size=8, num_batches=1000)
    assert set(out) == {"obs", "action", "reward", "indices", "weights"}
    assert out["obs"].shape == (1000, 8, 3) and out["obs"].dtype == np.float32
    assert out["action"].shape == (1000, 8) and out["action"].dtype == np.int64
    assert out["indices"].dtype == np.int64 and out["weights"].dtype == np.float32
    np.testing.assert_array_equal(out["weights"], np.ones((1000, 8)))
    # Only rows 0..4 were written; all five are drawn, and the data matches the rows.
    assert set(np.unique(out["indices"])) == {0, 1, 2, 3, 4}
    np.testing.assert_array_equal(out["action"], out["indices"] + 40)
    np.testing.assert_array_equal(out["obs"][..., 2], out["indices"] + 40)
    np.testing.assert_array_equal(out["reward"], (out["indices"] + 40) * 0.5)


def test_sample_is_roughly_uniform():
    replay = UniformReplay(capacity=4, fields=FIELDS, seed=1)
    replay.add_batch(batch(np.arange(4)))
    counts = np.bincount(replay.sample(1000, 100)["indices"].ravel(), minlength=4)
    np.testing.assert_allclose(counts / counts.sum(), 0.25, atol=0.01)


def test_empty_replay_and_bad_sizes_raise():
    replay = UniformReplay(capacity=4, fields=FIELDS, seed=0)
    with pytest.raises(ValueError, match="empty replay"):
        replay.sample(2)
    replay.add_batch(batch([1]))
    with pytest.raises(ValueError, match="batch_size and num_batches must be >= 1"):
        replay.sample(0)


def test_reserved_field_names_rejected():
    with pytest.raises(ValueError, match="reserved"):
        UniformReplay(capacity=4, fields={"weights": ((), np.float32)}, seed=0)


def test_update_priorities_is_a_no_op():
    replay = UniformReplay(capacity=4, fields=FIELDS, seed=3)
    replay.add_batch(batch(np.arange(4)))
    twin = UniformReplay(capacity=4, fields=FIELDS, seed=3)
    twin.add_batch(batch(np.arange(4)))
    replay.update_priorities(np.array([0, 1]), np.array([100.0, 0.0]))
    np.testing.assert_array_equal(replay.sample(16, 4)["indices"], twin.sample(16, 4)["indices"])


@pytest.mark.parametrize("num_added", [3, 11])  # partly filled, and wrapped around
def test_state_dict_round_trips_through_npz(tmp_path, num_added):
    replay = UniformReplay(capacity=8, fields=FIELDS, seed=7)
    for chunk in np.array_split(np.arange(num_added) + 100, 2):
        replay.add_batch(batch(chunk))
    replay.sample(4, 3)  # advance the RNG so its state is not the seed's
    path = tmp_path / "replay.npz"
    np.savez(path, **replay.state_dict())
    with np.load(path, allow_pickle=False) as data:
        state = dict(data)

    restored = UniformReplay(capacity=8, fields=FIELDS, seed=12345)
    restored.load_state_dict(state)
    assert (restored.size, len(restored)) == (replay.size, len(replay))
    for a, b in [(replay.sample(5, 4), restored.sample(5, 4)) for _ in range(3)]:
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    # The ring position was restored too: the next write lands on the same rows.
    np.testing.assert_array_equal(
        replay.add_batch(batch([1, 2])), restored.add_batch(batch([1, 2]))
    )


def test_load_rejects_other_sampler_and_fields():
    from rl.memory import PrioritizedReplay

    replay = UniformReplay(capacity=4, fields=FIELDS, seed=0)
    replay.add_batch(batch([1]))
    with pytest.raises(ValueError, match="'uniform' replay, cannot load it into 'prioritized'"):
        PrioritizedReplay(capacity=4, fields=FIELDS, seed=0).load_state_dict(replay.state_dict())
    other = {"obs": ((3,), np.float32)}
    with pytest.raises(ValueError, match="fields"):
        UniformReplay(capacity=4, fields=other, seed=0).load_state_dict(replay.state_dict())
