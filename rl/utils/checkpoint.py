"""Checkpoints that hold everything needed to continue a run, written atomically, verified
when read (layout: docs/run_directory.md).

`manifest.json` and then `latest.json` are written last, so the checkpoint `latest.json` names
is complete; a run killed while writing leaves a step directory nothing names (with or without
its manifest), replaced when the resumed run saves that step again.
A damaged checkpoint (a file cut short, changed or missing) is skipped with one warning line for
the newest intact older one, and never deleted: it is moved aside to `damaged_step_...` when a
new checkpoint needs its name.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any

import numpy as np
import tensorflow as tf

from rl.errors import UserError
from rl.utils.chunks import LARGE_ARRAY_BYTES, ChunkStore, DamagedChunk
from rl.utils.files import atomic_write_json, join, load_npz, read_json, save_npz

POINTER = "latest.json"
MANIFEST = "manifest.json"
ARRAYS = "arrays.json"
CHUNKS = "chunks"
DAMAGED_PREFIX = "damaged_"
_warned: set[str] = set()  # damaged checkpoints already reported by this process


def file_digest(path: str) -> tuple[int, str]:
    """(size in bytes, SHA-256) of a file, read in blocks."""
    digest, size = hashlib.sha256(), 0
    with tf.io.gfile.GFile(path, "rb") as f:
        while block := f.read(8 << 20):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


class CheckpointStore:
    """Saves and restores checkpoints in one directory, keeping the newest `keep`."""

    def __init__(self, directory: str, keep: int) -> None:
        self.directory = directory
        self.keep = max(1, keep)
        self.chunks = ChunkStore(join(directory, CHUNKS))
        self.last_save_bytes = 0  # bytes the last `save` wrote (benchmarks/checkpoint_io.py)

    def latest(self) -> dict[str, Any] | None:
        """The pointer of the newest intact checkpoint, or None; a damaged newest one is skipped
        with one warning line, and UserError if none is intact."""
        path = join(self.directory, POINTER)
        if not tf.io.gfile.exists(path):
            return None
        try:
            pointer = read_json(path)
            name = str(pointer["directory"])
            int(pointer["step"])
        except (ValueError, KeyError, TypeError):
            pointer, name = None, "latest.json"
        problem = "latest.json is unreadable" if pointer is None else self.damage(name)
        if problem is None:
            return pointer
        for older in reversed(self.step_names()):
            if (pointer is None or older < name) and self._has_manifest(older):
                if self.damage(older) is None:
                    self._warn(name, problem, older)
                    return {"step": int(older[len("step_") :]), "directory": older}
        what = f"names {name}, which is damaged ({problem})," if pointer else "is unreadable"
        raise UserError(
            f"{path} {what} and no older checkpoint is intact; train into another --output_dir "
            "(the damaged files are left as they are)"
        )

    def damage(self, name: str) -> str | None:
        """What is wrong with checkpoint `name` (checked against its manifest), or None."""
        directory = join(self.directory, name)
        manifest_path = join(directory, MANIFEST)
        if not tf.io.gfile.exists(manifest_path):
            return "it is missing or incomplete"
        try:
            manifest = read_json(manifest_path)
            files, chunk_sizes = manifest["files"], manifest["chunks"]
        except (ValueError, KeyError, TypeError):
            return "its manifest.json is unreadable"
        for file_name, expected in sorted(files.items()):
            path = join(directory, file_name)
            if not tf.io.gfile.exists(path):
                return f"{file_name} is missing"
            size, digest = file_digest(path)
            if size != expected["bytes"]:
                return f"{file_name} has {size} bytes, the manifest says {expected['bytes']}"
            if digest != expected["sha256"]:
                return f"{file_name} does not match its SHA-256"
        return self.chunks.missing(sorted(chunk_sizes), chunk_sizes)

    def save(
        self,
        step: int,
        tf_checkpoint: tf.train.Checkpoint,
        numpy_state: dict[str, np.ndarray],
        trainer_state: dict[str, Any],
    ) -> str:
        name = f"step_{step:012d}"
        directory = join(self.directory, name)
        if tf.io.gfile.exists(directory):
            if self._has_manifest(name) and self.damage(name) is not None:
                self._move_aside(name)  # a damaged checkpoint that was skipped: keep it
            else:  # a killed write's, cut before its manifest or before latest.json named it
                tf.io.gfile.rmtree(directory)
        tf.io.gfile.makedirs(directory)
        tf_checkpoint.write(join(directory, "tf"))
        large = {k: v for k, v in numpy_state.items() if np.asarray(v).nbytes >= LARGE_ARRAY_BYTES}
        small = {k: v for k, v in numpy_state.items() if k not in large}
        save_npz(join(directory, "numpy.npz"), small)
        layout, chunk_sizes, chunk_bytes = self.chunks.put(large)
        atomic_write_json(join(directory, ARRAYS), layout)
        atomic_write_json(join(directory, "trainer.json"), trainer_state)
        files = {}
        for file_name in sorted(tf.io.gfile.listdir(directory)):
            size, digest = file_digest(join(directory, file_name))
            files[file_name] = {"bytes": size, "sha256": digest}
        atomic_write_json(join(directory, MANIFEST), {"files": files, "chunks": chunk_sizes})
        atomic_write_json(join(self.directory, POINTER), {"step": step, "directory": name})
        self.last_save_bytes = sum(f["bytes"] for f in files.values()) + chunk_bytes
        self._prune(keep_name=name)
        return directory

    def restore(
        self, tf_checkpoint: tf.train.Checkpoint, pointer: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Restores the newest checkpoint into `tf_checkpoint`; returns its numpy/trainer state."""
        pointer = pointer or self.latest()
        if pointer is None:
            raise FileNotFoundError(f"no checkpoint in {self.directory}")
        directory = join(self.directory, pointer["directory"])
        try:
            tf_checkpoint.read(join(directory, "tf")).assert_consumed()
        except (ValueError, AssertionError, tf.errors.OpError) as e:
            first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise UserError(
                f"checkpoint {directory} does not fit this agent ({first_line[:160]}); the "
                "network or agent changed: train into another --output_dir"
            ) from None
        return self.numpy_state(pointer["directory"]), read_json(join(directory, "trainer.json"))

    def numpy_state(self, name: str) -> dict[str, np.ndarray]:
        """Checkpoint `name`'s numpy state: numpy.npz and the chunked large arrays."""
        directory = join(self.directory, name)
        state = load_npz(join(directory, "numpy.npz"))
        if tf.io.gfile.exists(join(directory, ARRAYS)):
            try:
                state.update(self.chunks.get(read_json(join(directory, ARRAYS))))
            except DamagedChunk as e:
                raise UserError(
                    f"checkpoint {directory} is damaged ({e}); move it aside "
                    f"({DAMAGED_PREFIX}{name}) and run again to resume from the one before"
                ) from None
        return state

    def step_names(self) -> list[str]:
        """The `step_...` checkpoint directories, oldest first."""
        if not tf.io.gfile.isdir(self.directory):
            return []
        return sorted(
            n.rstrip("/") for n in tf.io.gfile.listdir(self.directory) if n.startswith("step_")
        )

    def _has_manifest(self, name: str) -> bool:
        return tf.io.gfile.exists(join(self.directory, name, MANIFEST))

    def _warn(self, name: str, problem: str, used: str) -> None:
        path = join(self.directory, name)
        if path not in _warned:
            _warned.add(path)
            print(
                f"train.py: warning: checkpoint {path} is damaged ({problem}); using {used} "
                "instead (the damaged one is kept)",
                file=sys.stderr,
            )

    def _move_aside(self, name: str) -> None:
        """Renames a damaged checkpoint to `damaged_<name>[_N]`, never deleting it."""
        target, n = join(self.directory, DAMAGED_PREFIX + name), 1
        while tf.io.gfile.exists(target):
            target, n = join(self.directory, f"{DAMAGED_PREFIX}{name}_{n}"), n + 1
        source = join(self.directory, name)
        try:
            tf.io.gfile.rename(source, target)
        except tf.errors.OpError:  # object stores cannot rename a directory: copy it
            tf.io.gfile.makedirs(target)
            for file_name in tf.io.gfile.listdir(source):
                tf.io.gfile.copy(join(source, file_name), join(target, file_name))
            tf.io.gfile.rmtree(source)

    def _prune(self, keep_name: str) -> None:
        names = self.step_names()
        complete = [n for n in names if n <= keep_name]
        for name in complete[: -self.keep]:
            tf.io.gfile.rmtree(join(self.directory, name))
        # A chunk stays while a kept checkpoint (or a damaged one, kept for inspection) lists it.
        referenced: set[str] = set()
        for name in tf.io.gfile.listdir(self.directory):
            manifest_path = join(self.directory, name.rstrip("/"), MANIFEST)
            if tf.io.gfile.exists(manifest_path):
                try:
                    referenced.update(read_json(manifest_path)["chunks"])
                except (ValueError, KeyError, TypeError):
                    continue
        self.chunks.sweep(referenced)


def read_numpy_state(step_dir: str) -> dict[str, np.ndarray]:
    """The numpy state of the checkpoint in `step_dir` (".../checkpoints/step_..."): its
    numpy.npz and its chunked large arrays."""
    parent, name = str(step_dir).rstrip("/").rsplit("/", 1)
    return CheckpointStore(parent, 1).numpy_state(name)
