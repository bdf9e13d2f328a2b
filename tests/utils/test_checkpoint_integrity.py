"""Checkpoint manifests, damaged checkpoints and the chunked (incremental) large arrays of
rl/utils/checkpoint.py and rl/utils/chunks.py, on a real tf.train.Checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from rl.errors import UserError
from rl.utils.checkpoint import CheckpointStore, read_numpy_state
from rl.utils.chunks import CHUNK_BYTES, blocks

ROWS = 100_000  # 100k rows x 16 float32 = 6.4 MB: chunked (> LARGE_ARRAY_BYTES)


def _state(step: int) -> tuple[tf.train.Checkpoint, dict[str, np.ndarray]]:
    variable = tf.Variable(np.arange(10, dtype=np.float32) * step)
    # Random contents (identical chunks would be stored once), rows < step rewritten by the
    # "transitions added so far".
    replay = np.random.default_rng(0).random((ROWS, 16), dtype=np.float32)
    rows = min(step, ROWS)
    replay[:rows] = np.arange(rows, dtype=np.float32)[:, None]
    return tf.train.Checkpoint(v=variable), {"replay/obs": replay, "rng": np.array(step)}


def test_blocks_cover_the_array_in_c_order():
    frames = np.random.default_rng(0).integers(0, 255, (3, 400, 84, 84), dtype=np.uint8)
    view = frames[:, :350]  # not contiguous, as the frame replay's filled rows are
    parts = list(blocks(view))
    assert all(p.nbytes <= CHUNK_BYTES for p in parts)
    assert b"".join(np.ascontiguousarray(p).tobytes() for p in parts) == view.tobytes()


def test_round_trip_is_bit_exact_and_later_saves_write_only_new_rows(tmp_path: Path):
    store = CheckpointStore(str(tmp_path / "checkpoints"), keep=2)
    ckpt, arrays = _state(40_000)
    store.save(40_000, ckpt, arrays, {"env_steps": 40_000})
    first = store.last_save_bytes
    assert first >= arrays["replay/obs"].nbytes  # the first save writes the whole buffer
    ckpt, arrays = _state(41_000)  # 1,000 more rows: 64 KB of new data
    store.save(41_000, ckpt, arrays, {"env_steps": 41_000})
    # The changed rows fall into one or two 1 MiB chunks; the rest are shared.
    assert store.last_save_bytes <= 2 * CHUNK_BYTES + 100_000
    restored = tf.train.Checkpoint(v=tf.Variable(np.zeros(10, np.float32)))
    numpy_state, trainer = store.restore(restored)
    assert trainer == {"env_steps": 41_000}
    np.testing.assert_array_equal(restored.v.numpy(), np.arange(10, dtype=np.float32) * 41_000)
    assert numpy_state["replay/obs"].tobytes() == arrays["replay/obs"].tobytes()
    assert int(numpy_state["rng"]) == 41_000
    manifest = json.loads((tmp_path / "checkpoints/step_000000041000/manifest.json").read_text())
    assert {"tf.index", "numpy.npz", "arrays.json", "trainer.json"} <= set(manifest["files"])
    assert len(manifest["chunks"]) == -(-arrays["replay/obs"].nbytes // CHUNK_BYTES)


def test_chunks_no_kept_checkpoint_lists_are_removed(tmp_path: Path):
    store = CheckpointStore(str(tmp_path / "checkpoints"), keep=2)
    for step in (20_000, 60_000, 100_000, 100_001):
        ckpt, arrays = _state(step)
        store.save(step, ckpt, arrays, {})
    kept = sorted(p.name for p in (tmp_path / "checkpoints").glob("step_*"))
    assert kept == ["step_000000100000", "step_000000100001"]
    listed = set()
    for name in kept:
        listed |= set(
            json.loads((tmp_path / "checkpoints" / name / "manifest.json").read_text())["chunks"]
        )
    on_disk = {p.name for p in (tmp_path / "checkpoints/chunks").iterdir()}
    assert on_disk == listed
    assert (
        read_numpy_state(str(tmp_path / "checkpoints" / kept[0]))["replay/obs"][-1, 0] == ROWS - 1
    )


def _save_three(tmp_path: Path) -> CheckpointStore:
    store = CheckpointStore(str(tmp_path / "checkpoints"), keep=3)
    for step in (1000, 2000, 3000):
        ckpt, arrays = _state(step)
        store.save(step, ckpt, arrays, {"env_steps": step})
    return store


def test_a_cut_short_newest_checkpoint_is_skipped_with_one_warning(tmp_path: Path, capsys):
    store = _save_three(tmp_path)
    newest = tmp_path / "checkpoints/step_000000003000"
    data = next(newest.glob("tf.data-*"))
    data.write_bytes(data.read_bytes()[:-7])  # a write cut short
    assert store.latest() == {"step": 2000, "directory": "step_000000002000"}
    assert store.latest()["step"] == 2000  # the warning is said once
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "step_000000003000 is damaged (tf.data-" in err[0]
    assert "using step_000000002000" in err[0]
    assert data.exists()  # never deleted
    # Training on saves at the damaged one's step again: the damaged one is moved aside.
    ckpt, arrays = _state(3000)
    store.save(3000, ckpt, arrays, {"env_steps": 3000})
    assert (tmp_path / "checkpoints/damaged_step_000000003000").is_dir()
    assert store.latest()["step"] == 3000


def test_a_complete_checkpoint_latest_json_never_named_is_replaced_not_kept(tmp_path: Path):
    # A run killed after a checkpoint's manifest, before latest.json named it: the resumed run
    # saves that step again, and the unnamed one (intact, not damaged) goes with its chunks.
    store = _save_three(tmp_path)
    pointer = tmp_path / "checkpoints/latest.json"
    pointer.write_text(json.dumps({"step": 2000, "directory": "step_000000002000"}))
    assert store.latest()["step"] == 2000
    ckpt, arrays = _state(3000)
    store.save(3000, ckpt, arrays, {"env_steps": 3000})
    assert not list((tmp_path / "checkpoints").glob("damaged_*"))
    listed = set()
    for manifest in (tmp_path / "checkpoints").glob("step_*/manifest.json"):
        listed |= set(json.loads(manifest.read_text())["chunks"])
    assert {p.name for p in (tmp_path / "checkpoints/chunks").iterdir()} == listed
    assert store.latest()["step"] == 3000


def test_a_missing_chunk_or_changed_file_is_damage(tmp_path: Path):
    store = _save_three(tmp_path)
    newest = tmp_path / "checkpoints/step_000000003000"
    manifest = json.loads((newest / "manifest.json").read_text())
    only_newest = set(manifest["chunks"]) - set(
        json.loads((tmp_path / "checkpoints/step_000000002000/manifest.json").read_text())["chunks"]
    )
    (tmp_path / "checkpoints/chunks" / sorted(only_newest)[0]).unlink()
    assert store.damage("step_000000003000").startswith("chunk ")
    (tmp_path / "checkpoints/step_000000002000/trainer.json").write_text(
        '{\n  "env_steps": 2001\n}\n'
    )  # same size
    assert store.damage("step_000000002000") == "trainer.json does not match its SHA-256"
    assert store.latest()["step"] == 1000


def test_no_intact_checkpoint_is_a_user_error(tmp_path: Path):
    store = _save_three(tmp_path)
    for step_dir in (tmp_path / "checkpoints").glob("step_*"):
        (step_dir / "numpy.npz").write_bytes(b"garbage")
    with pytest.raises(UserError, match="no older checkpoint is intact"):
        store.latest()


def test_checkpoints_work_through_gfile_filesystems():
    store = CheckpointStore("ram://checkpoint_integrity/checkpoints", keep=1)
    ckpt, arrays = _state(5000)
    store.save(5000, ckpt, arrays, {"env_steps": 5000})
    assert store.latest()["step"] == 5000
    numpy_state = store.numpy_state("step_000000005000")
    assert numpy_state["replay/obs"].tobytes() == arrays["replay/obs"].tobytes()
