"""A run directory as `rl.repro` reads it (hparams.json, manifest.json, progress.csv); a path
that is not one is a UserError naming what is missing, before anything is trained or printed.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Any

import tensorflow as tf

from rl.errors import UserError
from rl.hparams import HParams
from rl.utils.files import join, read_json
from rl.utils.run_dir import HPARAMS_FILE, MANIFEST_FILE


@dataclass(frozen=True)
class RunInfo:
    path: str
    hparams: HParams
    manifest: dict[str, Any]

    @property
    def seed(self) -> int:
        return int(self.manifest["seed"])

    @property
    def hparams_set(self) -> str:
        return str(self.manifest.get("hparams_set") or "")

    @property
    def copy_index(self) -> int:
        return int(self.manifest.get("copy_index") or 0)


def read_run(path: str) -> RunInfo:
    """The run dir at `path`; raises UserError if it is not one written by train.py."""
    if not tf.io.gfile.isdir(path):
        raise UserError(f"{path} is not a directory; give a run dir such as runs/dqn/run_0")
    hparams_path, manifest_path = join(path, HPARAMS_FILE), join(path, MANIFEST_FILE)
    for needed in (hparams_path, manifest_path):
        if not tf.io.gfile.exists(needed):
            raise UserError(
                f"{needed} does not exist; give a run dir written by train.py "
                "(e.g. runs/dqn/run_0, not runs/dqn)"
            )
    with tf.io.gfile.GFile(hparams_path, "r") as f:
        try:
            hparams = HParams.from_json(f.read())
        except UserError as e:
            raise UserError(f"{hparams_path}: {e}") from None
    try:
        manifest = read_json(manifest_path)
        int(manifest["seed"])
    except (ValueError, KeyError, TypeError):
        raise UserError(
            f"{manifest_path} is not a manifest with a seed; the run dir was altered by hand"
        ) from None
    return RunInfo(path, hparams, manifest)


def eval_curve(path: str) -> dict[int, str] | None:
    """`{env_steps: eval_return_mean}` from the run's progress.csv (the text as written, so
    equal means bit-equal as printed), or None if it has none."""
    csv_path = join(path, "progress.csv")
    if not tf.io.gfile.exists(csv_path):
        return None
    with tf.io.gfile.GFile(csv_path, "r") as f:
        rows = list(csv.DictReader(f))
    return {int(r["env_steps"]): r.get("eval_return_mean", "") for r in rows if r.get("env_steps")}
