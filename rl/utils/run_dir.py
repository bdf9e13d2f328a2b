"""The run directory: `output_dir/run_<i>/` with hparams.json, manifest.json and friends.

Everything here is data (JSON, CSV, checkpoints); nothing loaded from a run dir is executed.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
from typing import Any

import tensorflow as tf

from rl.errors import UserError
from rl.hparams import HParams
from rl.utils.files import atomic_write_json, join, read_json

HPARAMS_FILE = "hparams.json"
MANIFEST_FILE = "manifest.json"
# Keys that may change between a run and its resumption without --allow_hparams_change:
# they set how long to train or which compiler runs it, not what is trained (`jit_compile`
# became `auto` by default: runs saved with `true` resume under the new default).
RESUMABLE_CHANGES = frozenset({"train_steps", "jit_compile"})


def run_dir_path(output_dir: str, copy_index: int) -> str:
    return join(output_dir, f"run_{copy_index}")


def check_writable(output_dir: str) -> None:
    """Raises UserError if `output_dir` cannot be created/written (local paths only; remote
    filesystems report their own errors on first write)."""
    if "://" in output_dir:
        return
    path = os.path.abspath(output_dir)
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        raise UserError(
            f"--output_dir {output_dir!r}: {probe!r} is a file, not a directory; "
            "choose another --output_dir"
        )
    try:  # os.access says yes to root even on read-only filesystems such as /proc
        tempfile.TemporaryDirectory(dir=probe, prefix=".rl_write_probe_").cleanup()
    except OSError as e:
        raise UserError(
            f"--output_dir {output_dir!r} is not writable ({probe!r}: {e.strerror}); "
            "choose a directory you can write to"
        ) from None


def check_run_dir_shape(run_dir: str) -> None:
    """A run dir path that exists must be a directory."""
    if tf.io.gfile.exists(run_dir) and not tf.io.gfile.isdir(run_dir):
        raise UserError(
            f"{run_dir} exists and is not a directory; remove it or choose another --output_dir"
        )


def saved_hparams(run_dir: str) -> HParams | None:
    path = join(run_dir, HPARAMS_FILE)
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path, "r") as f:
        return HParams.from_json(f.read())


def check_resume_compatible(run_dir: str, hparams: HParams, allow_change: bool) -> None:
    """Refuses to continue a run whose saved hparams differ (unless explicitly allowed)."""
    saved = saved_hparams(run_dir)
    if saved is None or allow_change:
        return
    changes = [line for line in saved.diff(hparams) if line.split(":")[0] not in RESUMABLE_CHANGES]
    if changes:
        raise UserError(
            f"{run_dir} was trained with different hparams ({'; '.join(changes)}); use the "
            "same settings, another --output_dir, or --allow_hparams_change to continue anyway"
        )


def git_revision() -> str | None:
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _installed_version(distribution: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def manifest(seed: int, copy_index: int, hparams_set: str) -> dict[str, Any]:
    import gymnasium
    import numpy

    return {
        "hparams_set": hparams_set,
        "seed": seed,
        "copy_index": copy_index,
        "command_line": [sys.executable, *sys.argv],
        "git_revision": git_revision(),
        "versions": {
            "python": platform.python_version(),
            "tensorflow": tf.__version__,
            "gymnasium": gymnasium.__version__,
            "numpy": numpy.__version__,
            "ale_py": _installed_version("ale-py"),  # Atari emulator and ROMs
        },
        "host": platform.node(),
        "started_unix": time.time(),
    }


def write_run_files(run_dir: str, hparams: HParams, manifest_data: dict[str, Any]) -> None:
    """Writes hparams.json and manifest.json (a resumed run keeps the first manifest and adds
    its own start to `resumed`)."""
    # The evaluation protocol decides what the reported returns mean: keep it beside them.
    manifest_data = {**manifest_data, "evaluation_protocol": hparams.eval.to_dict()}
    tf.io.gfile.makedirs(run_dir)
    with tf.io.gfile.GFile(join(run_dir, HPARAMS_FILE) + ".tmp", "w") as f:
        f.write(hparams.to_json())
    tf.io.gfile.rename(join(run_dir, HPARAMS_FILE) + ".tmp", join(run_dir, HPARAMS_FILE), True)
    path = join(run_dir, MANIFEST_FILE)
    if tf.io.gfile.exists(path):
        existing = read_json(path)
        existing.setdefault("resumed", []).append(
            {k: manifest_data[k] for k in ("command_line", "git_revision", "started_unix")}
        )
        manifest_data = existing
    atomic_write_json(path, manifest_data)
