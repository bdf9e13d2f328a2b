"""Compares two checkpoints of the same step (rl/utils/checkpoint.py layout) without building
an agent: every TF variable (read with `tf.train.load_checkpoint`), every numpy array of
numpy.npz (replay, priorities, numpy RNG state) and every trainer.json counter except the ones
that measure wall time.

The order in which things are compared is fixed (TF variables by name, then arrays by name, then
trainer.json keys by name), so "the first difference" is the same answer every time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf

from rl.utils.files import join, load_npz, read_json

# trainer.json keys that measure time, not what was trained.
WALL_CLOCK_KEYS = frozenset({"wall_seconds", "first_wall_at_threshold"})
# trainer.json keys set by evaluations: a run that ends at step N evaluates there whether or not
# N is an evaluation step, so a shorter rerun has one evaluation more at its last step.
EVAL_KEYS = frozenset(
    {"evaluations", "last_eval_return", "first_step_at_threshold", "stopped_early"}
)
_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


@dataclass(frozen=True)
class Difference:
    """The first thing that differs between two checkpoints of one step."""

    kind: str  # "variable", "array", "trainer.json key" or "checkpoint"
    name: str
    detail: str  # e.g. "max abs difference 3.1e-06"

    def describe(self) -> str:
        return f"{self.kind} {self.name} ({self.detail})"


@dataclass(frozen=True)
class Checkpoint:
    """What one checkpoint directory holds, as plain data."""

    variables: dict[str, np.ndarray]
    arrays: dict[str, np.ndarray]
    trainer: dict[str, Any]


def checkpoint_steps(run_dir: str) -> dict[int, str]:
    """`{step: step directory}` of the complete checkpoints of `run_dir` (none if it has no
    `checkpoints/latest.json`). A step directory newer than the one latest.json names is the
    leftover of a killed write, and is skipped, as a resume skips it."""
    directory = join(run_dir, "checkpoints")
    pointer_path = join(directory, "latest.json")
    if not tf.io.gfile.exists(pointer_path):
        return {}
    try:
        latest = int(read_json(pointer_path)["step"])
    except (ValueError, KeyError, TypeError):
        return {}
    steps = {}
    for name in tf.io.gfile.listdir(directory):
        name = name.rstrip("/")
        if not name.startswith("step_") or not name[5:].isdigit():
            continue
        step = int(name[5:])
        path = join(directory, name)
        complete = all(
            tf.io.gfile.exists(join(path, f)) for f in ("tf.index", "numpy.npz", "trainer.json")
        )
        if step <= latest and complete:
            steps[step] = path
    return dict(sorted(steps.items()))


def read_checkpoint(step_dir: str) -> Checkpoint:
    reader = tf.train.load_checkpoint(join(step_dir, "tf"))
    variables = {
        name: np.asarray(reader.get_tensor(name))
        for name in sorted(reader.get_variable_to_shape_map())
        if name != _GRAPH_KEY
    }
    arrays = load_npz(join(step_dir, "numpy.npz"))
    trainer = {
        k: v
        for k, v in read_json(join(step_dir, "trainer.json")).items()
        if k not in WALL_CLOCK_KEYS
    }
    return Checkpoint(variables, dict(sorted(arrays.items())), dict(sorted(trainer.items())))


def array_difference(a: np.ndarray, b: np.ndarray) -> str | None:
    """None if `a` and `b` are identical (dtype, shape, every element, NaN equal to NaN), else
    what differs: dtype, shape, or the largest absolute difference of their elements."""
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} vs {b.dtype}"
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    numeric = np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_
    if not numeric:
        return None if np.array_equal(a, b) else "values differ"
    if np.array_equal(a, b, equal_nan=np.issubdtype(a.dtype, np.inexact)):
        return None
    if np.issubdtype(a.dtype, np.complexfloating):
        delta = np.abs(a - b)
    else:
        delta = np.abs(a.astype(np.float64) - b.astype(np.float64))
    return f"max abs difference {np.nanmax(delta):.6g}" if np.any(~np.isnan(delta)) else "NaNs"


def _first_in(kind: str, a: dict[str, Any], b: dict[str, Any], arrays: bool) -> Difference | None:
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            return Difference(kind, name, "only in the " + ("second" if name in b else "first"))
        if arrays:
            detail = array_difference(np.asarray(a[name]), np.asarray(b[name]))
        else:
            detail = None if a[name] == b[name] else f"{a[name]!r} vs {b[name]!r}"
        if detail is not None:
            return Difference(kind, name, detail)
    return None


def first_difference(
    a: Checkpoint, b: Checkpoint, ignore_trainer_keys: frozenset[str] = frozenset()
) -> Difference | None:
    """The first variable, array or counter that differs between `a` and `b`, or None."""
    trainer_a = {k: v for k, v in a.trainer.items() if k not in ignore_trainer_keys}
    trainer_b = {k: v for k, v in b.trainer.items() if k not in ignore_trainer_keys}
    return (
        _first_in("variable", a.variables, b.variables, arrays=True)
        or _first_in("array", a.arrays, b.arrays, arrays=True)
        or _first_in("trainer.json key", trainer_a, trainer_b, arrays=False)
    )
