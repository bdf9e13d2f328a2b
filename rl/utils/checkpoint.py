"""Checkpoints that hold everything needed to continue a run, written atomically.

Layout under `<run_dir>/checkpoints/`:
    step_000000010000/   tf.index + tf.data-*  (tf.train.Checkpoint: weights, optimizer slots,
                                               counters, tf.random.Generator state)
                         numpy.npz              (replay contents and priorities, partial n-step
                                               data, numpy RNG states; loaded without pickle)
                         trainer.json           (episode counters, wall time, schedule points)
    latest.json          {"step": ..., "directory": "step_..."}: written LAST, by rename

A run killed while writing leaves a step directory that `latest.json` does not name; it is
ignored and replaced. So the newest complete checkpoint is always the one `latest.json` names.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from rl.errors import UserError
from rl.utils.files import atomic_write_json, join, load_npz, read_json, save_npz

POINTER = "latest.json"


class CheckpointStore:
    """Saves and restores checkpoints in one directory, keeping the newest `keep`."""

    def __init__(self, directory: str, keep: int) -> None:
        self.directory = directory
        self.keep = max(1, keep)

    def latest(self) -> dict[str, Any] | None:
        """The pointer of the newest complete checkpoint, or None."""
        path = join(self.directory, POINTER)
        if not tf.io.gfile.exists(path):
            return None
        try:
            pointer = read_json(path)
            index = join(self.directory, pointer["directory"], "tf.index")
            int(pointer["step"])
        except (ValueError, KeyError, TypeError):
            pointer, index = None, None
        if pointer is None or not tf.io.gfile.exists(index):
            raise UserError(
                f"{path} is damaged or names a missing checkpoint; the run dir was altered by "
                "hand: restore it, or train into another --output_dir"
            )
        return pointer

    def save(
        self,
        step: int,
        tf_checkpoint: tf.train.Checkpoint,
        numpy_state: dict[str, np.ndarray],
        trainer_state: dict[str, Any],
    ) -> str:
        name = f"step_{step:012d}"
        directory = join(self.directory, name)
        if tf.io.gfile.exists(directory):  # leftover of a killed write: never referenced
            tf.io.gfile.rmtree(directory)
        tf.io.gfile.makedirs(directory)
        tf_checkpoint.write(join(directory, "tf"))
        save_npz(join(directory, "numpy.npz"), numpy_state)
        atomic_write_json(join(directory, "trainer.json"), trainer_state)
        atomic_write_json(join(self.directory, POINTER), {"step": step, "directory": name})
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
        return load_npz(join(directory, "numpy.npz")), read_json(join(directory, "trainer.json"))

    def _prune(self, keep_name: str) -> None:
        names = sorted(
            n.rstrip("/") for n in tf.io.gfile.listdir(self.directory) if n.startswith("step_")
        )
        complete = [n for n in names if n <= keep_name]
        for name in complete[: -self.keep]:
            tf.io.gfile.rmtree(join(self.directory, name))
