"""The run directory: `output_dir/run_<i>/` with hparams.json, manifest.json and friends.

Everything here is data (JSON, CSV, checkpoints); nothing loaded from a run dir is executed.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import platform
import sys
import tempfile
import time
from typing import Any

import tensorflow as tf

from rl.errors import UserError
from rl.hparams import HParams
from rl.utils.files import atomic_write_bytes, atomic_write_json, join, read_json
from rl.utils.repro_facts import (
    cpu,
    devices,
    env_spec,
    git_state,
    installed_packages,
    tf_determinism,
)
from rl.utils.run_dir_lock import missing_dirs

HPARAMS_FILE = "hparams.json"
MANIFEST_FILE = "manifest.json"
BEST_DIR = "checkpoints/best"  # the best-evaluated policy (docs/run_directory.md)
# Keys that may change between a run and its resumption without --allow_hparams_change:
# they set how long to train or which compiler runs it, not what is trained.
RESUMABLE_CHANGES = frozenset({"train_steps", "jit_compile"})


def run_dir_path(output_dir: str, copy_index: int) -> str:
    return join(output_dir, f"run_{copy_index}")


def run_label(run_dir: str) -> str:
    """ "run_3" for ".../run_3": the name a run's console lines and TensorBoard trial carry."""
    return run_dir.rstrip("/").split("/")[-1]


def check_writable(output_dir: str) -> None:
    """UserError if a local `output_dir` cannot be created/written (remote ones fail on write)."""
    if "://" in output_dir:
        return
    missing = missing_dirs(os.path.abspath(output_dir))
    probe = os.path.dirname(missing[-1]) if missing else os.path.abspath(output_dir)
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


def saved_hparams(run_dir: str, defaults: HParams | None = None) -> HParams | None:
    """The run's hparams.json (None if none). With `defaults`, keys declared since the run was saved
    take their values from `defaults`, so test mode can play an older run; saved values win."""
    path = join(run_dir, HPARAMS_FILE)
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path, "r") as f:
        saved = HParams.from_json(f.read())
    if defaults is None:
        return saved
    merged = json.loads(saved.to_json())
    _fill_missing(merged["hparams"], json.loads(defaults.to_json())["hparams"])
    return HParams.from_json(json.dumps(merged))


def _fill_missing(entries: dict[str, Any], defaults: dict[str, Any]) -> None:
    for name, entry in defaults.items():
        if name not in entries:
            entries[name] = entry
        elif entry["type"] == "hparams" and entries[name]["type"] == "hparams":
            _fill_missing(entries[name]["value"], entry["value"])


def check_resume_compatible(
    run_dir: str, hparams: HParams, allow_change: bool, declared: HParams | None = None
) -> None:
    """Refuses to continue a run whose saved hparams differ (unless allowed); keys declared since
    the run was saved count as having had the `declared` set's defaults."""
    saved = saved_hparams(run_dir, defaults=declared)
    if saved is None or allow_change:
        return
    changes = [line for line in saved.diff(hparams) if line.split(":")[0] not in RESUMABLE_CHANGES]
    if changes:
        raise UserError(
            f"{run_dir} was trained with different hparams ({'; '.join(changes)}); use the "
            "same settings, another --output_dir, or --allow_hparams_change to continue anyway"
        )


@functools.cache
def _code_and_packages() -> tuple[dict[str, Any], dict[str, str]]:
    """This code's git state and installed packages, read once per process (~0.2 s each)."""
    return git_state(os.path.dirname(os.path.abspath(__file__))), installed_packages()


def hparams_changes(hparams_set: str, hparams: HParams) -> dict[str, dict[str, Any]] | None:
    """`{key: {"set": ..., "run": ...}}` where the run's hparams differ from the registered set
    (None on the side lacking a key); None if the set is not registered."""
    from rl import registry

    try:
        registered = registry.get_hparams(hparams_set)()
    except UserError:
        return None
    base, run = registered.flat(), hparams.flat()
    return {
        key: {"set": base.get(key), "run": run.get(key)}
        for key in sorted(set(base) | set(run))
        if key not in base or key not in run or base[key] != run[key]
    }


def manifest(
    seed: int, copy_index: int, hparams_set: str, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """How and where this process started the run (command, code, packages, devices, TF
    determinism); `overrides`: the flags that changed the set, as typed."""
    git, packages = copy.deepcopy(_code_and_packages())
    return {
        "hparams_set": hparams_set,
        "seed": seed,
        "copy_index": copy_index,
        "command_line": [sys.executable, *sys.argv],
        "overrides": overrides,
        "git": git,
        "python": platform.python_version(),
        "packages": packages,
        "tf_determinism": tf_determinism(),
        "devices": devices(),
        "cpu": cpu(),
        "host": platform.node(),
        "started_unix": time.time(),
    }


# Manifest keys a resume never reports as changed: they differ at every start.
_ALWAYS_NEW = frozenset({"started_unix", "resumed"})


def open_one_level(data: dict[str, Any] | None) -> dict[str, Any]:
    """Top-level keys, with dict values opened one level (`packages.numpy`, `git.dirty`): how
    manifests are compared."""
    out: dict[str, Any] = {}
    for key, value in (data or {}).items():
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def manifest_changes(first: dict[str, Any], now: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """`{key: {"first": ..., "now": ...}}` for every (one level dotted) manifest key whose value
    differs between the first start of a run and this one."""
    a, b = (
        open_one_level({k: v for k, v in m.items() if k not in _ALWAYS_NEW}) for m in (first, now)
    )
    return {
        key: {"first": a.get(key), "now": b.get(key)}
        for key in sorted(set(a) | set(b))
        if a.get(key) != b.get(key)
    }


def write_run_files(run_dir: str, hparams: HParams, manifest_data: dict[str, Any]) -> None:
    """Writes hparams.json and manifest.json. A resumed run keeps the first manifest and appends its
    start to `resumed` with every manifest value that changed, so a run resumed under other code,
    packages or hparams says so."""
    manifest_data = {
        **manifest_data,
        # The evaluation protocol decides what the reported returns mean: keep it beside them.
        "evaluation_protocol": hparams.eval.to_dict(),
        "hparams_changes": hparams_changes(manifest_data.get("hparams_set", ""), hparams),
        "env": env_spec(hparams.env),
    }
    tf.io.gfile.makedirs(run_dir)
    atomic_write_bytes(join(run_dir, HPARAMS_FILE), hparams.to_json().encode())
    path = join(run_dir, MANIFEST_FILE)
    if tf.io.gfile.exists(path):
        existing = read_json(path)
        entry = {k: manifest_data.get(k) for k in ("command_line", "started_unix")}
        entry["changed"] = manifest_changes(existing, manifest_data)
        existing.setdefault("resumed", []).append(entry)
        manifest_data = existing
    atomic_write_json(path, manifest_data)
