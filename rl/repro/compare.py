"""Compares two checkpoints of the same step without building an agent: TF variables, numpy
arrays and trainer counters (not wall times), in a fixed order, so "the first difference" is the
same answer every time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

from rl.utils import private_apis
from rl.utils.checkpoint import read_numpy_state
from rl.utils.files import join, read_json

# trainer.json keys that measure time, not what was trained.
WALL_CLOCK_KEYS = frozenset({"wall_seconds", "first_wall_at_threshold"})
# trainer.json keys set by evaluations: a run that ends at step N evaluates there whether or not
# N is an evaluation step, so a shorter rerun has one evaluation more at its last step.
EVAL_KEYS = frozenset(
    {"evaluations", "last_eval_return", "first_step_at_threshold", "stopped_early", "best_eval"}
)
_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_MAX_PATHS = 16  # per object: enough to find a readable one, bounded on odd graphs


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
    """What one checkpoint directory holds, as plain data. `names` maps a variable's checkpoint
    key to a readable path to the same variable (see `readable_names`)."""

    variables: dict[str, np.ndarray]
    arrays: dict[str, np.ndarray]
    trainer: dict[str, Any]
    names: dict[str, str] = field(default_factory=dict)


def readable_names(serialized_graph: bytes) -> dict[str, str]:
    """`{checkpoint key: readable path}` from a checkpoint's object graph. A checkpoint keys a
    variable by its shortest path, often the optimizer's list
    (`agent/learner/optimizer/_trainable_variables/5`); this picks the path outside the optimizer
    with the fewest private parts (`agent/q_network/head/advantage/bias`). Empty if the graph
    cannot be read (TF's proto module moved): the keys are then shown as they are."""
    try:  # ImportError, or protobuf's DecodeError, whose type differs between implementations
        graph = private_apis.checkpoint_object_graph(serialized_graph)
    except private_apis.UnsupportedVersion:
        raise
    except Exception:
        return {}
    paths: dict[int, list[tuple[str, ...]]] = {0: [()]}
    queue = [(0, ())]
    while queue:
        node_id, path = queue.pop(0)
        for child in graph.nodes[node_id].children:
            known = paths.setdefault(child.node_id, [])
            if len(known) < _MAX_PATHS and len(path) < 32:
                known.append((*path, child.local_name))
                queue.append((child.node_id, known[-1]))

    def rank(path: tuple[str, ...]) -> tuple[int, int, str]:
        private = sum(part.startswith("_") for part in path)
        return (private, len("/".join(path)), "/".join(path))

    names = {}
    for node_id, node_paths in paths.items():
        outside = [p for p in node_paths if "optimizer" not in p]
        for attribute in graph.nodes[node_id].attributes:
            if outside and "optimizer" in attribute.checkpoint_key.split("/"):
                names[attribute.checkpoint_key] = "/".join(min(outside, key=rank))
    return names


def checkpoint_steps(run_dir: str) -> dict[int, str]:
    """`{step: step directory}` of `run_dir`'s complete checkpoints; a directory newer than the one
    latest.json names is a killed write's leftover and skipped, as a resume skips it."""
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
        files = ("tf.index", "numpy.npz", "trainer.json")
        if step <= latest and all(tf.io.gfile.exists(join(path, f)) for f in files):
            steps[step] = path
    return dict(sorted(steps.items()))


def read_checkpoint(step_dir: str) -> Checkpoint:
    reader = tf.train.load_checkpoint(join(step_dir, "tf"))
    graph_key = private_apis.CHECKPOINT_GRAPH_KEY
    names = readable_names(reader.get_tensor(graph_key)) if reader.has_tensor(graph_key) else {}
    variables = {
        name: np.asarray(reader.get_tensor(name))
        for name in sorted(reader.get_variable_to_shape_map())
        if name != graph_key
    }
    arrays = read_numpy_state(step_dir)
    saved = read_json(join(step_dir, "trainer.json"))
    trainer = {k: v for k, v in sorted(saved.items()) if k not in WALL_CLOCK_KEYS}
    return Checkpoint(variables, dict(sorted(arrays.items())), trainer, names)


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
    wide = np.complex128 if np.issubdtype(a.dtype, np.complexfloating) else np.float64
    delta = np.abs(a.astype(wide) - b.astype(wide))
    return f"max abs difference {np.nanmax(delta):.6g}" if np.any(~np.isnan(delta)) else "NaNs"


def _first_in(kind: str, a: dict[str, Any], b: dict[str, Any], arrays: bool) -> Difference | None:
    """The first key (in sorted order) whose values differ, or that only one side has."""
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
    variable = _first_in("variable", a.variables, b.variables, arrays=True)
    if variable is not None:
        key = variable.name.removesuffix(_VALUE_SUFFIX)
        readable = a.names.get(variable.name) or b.names.get(variable.name) or key
        detail = variable.detail if readable == key else f"{variable.detail}; checkpoint key {key}"
        return Difference("variable", readable, detail)
    return _first_in("array", a.arrays, b.arrays, arrays=True) or _first_in(
        "trainer.json key", trainer_a, trainer_b, arrays=False
    )
