"""The learner's policy weights, shared with the actor processes through shared memory.

Ape-X actors copy the learner's parameters every so often (the paper: every 400 frames). Here
the learner publishes its weights every `workers.policy_refresh_every` update calls into ONE
shared-memory block with a version number, and each actor copies them when the version changed,
before its next block of env steps. Compared with a queue per actor, a slow actor never piles up
stale copies and a publication costs one copy whatever the number of actors. The weights travel
as raw numpy arrays (no pickling); a lock makes every read see one whole publication.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import tensorflow as tf

ALIGN = 8  # bytes: every array starts at an offset any dtype can be viewed at


def policy_variables(agent: tf.Module) -> list[tf.Variable]:
    """The variables an actor needs to act as the learner's policy and to compute priorities.

    Those of every Keras network the agent holds (online and target networks alike), plus its
    other trainable variables (SAC's temperature), in attribute-name order, which is the same
    in every process. Counters, optimizer slots, RNG and exploration-noise state are per process.
    """
    out: list[tf.Variable] = []
    attributes = vars(agent)
    for name in sorted(attributes):
        value = attributes[name]
        if isinstance(value, tf.keras.layers.Layer):
            out.extend(value.variables)
        elif isinstance(value, tf.Variable) and value.trainable:
            out.append(value)
    return out


class SharedWeights:
    """A versioned copy of a fixed list of arrays in shared memory: one writer, many readers."""

    def __init__(self, context: Any, arrays: list[np.ndarray]) -> None:
        """`context` is a multiprocessing context; `arrays` give the shapes and dtypes."""
        layout: list[tuple[tuple[int, ...], str, int]] = []
        offset = 0
        for array in arrays:
            array = np.asarray(array)
            layout.append((tuple(array.shape), array.dtype.str, offset))
            offset += -(-array.nbytes // ALIGN) * ALIGN
        self._handles = {
            "layout": layout,
            "buffer": context.RawArray(ctypes.c_uint8, max(offset, 1)),
            "version": context.RawValue(ctypes.c_int64, 0),
            "env_steps": context.RawValue(ctypes.c_int64, 0),
            "lock": context.Lock(),
        }

    def handles(self) -> dict[str, Any]:
        """Plain multiprocessing objects and builtins to pass to a child process, which calls
        `attach` with them (the actor unpickles them before it may import this module)."""
        return dict(self._handles)

    @classmethod
    def attach(cls, handles: dict[str, Any]) -> SharedWeights:
        self = cls.__new__(cls)
        self._handles = dict(handles)
        return self

    @property
    def version(self) -> int:
        """0 until the first publication, then 1, 2, ..."""
        return int(self._handles["version"].value)

    def publish(self, arrays: list[np.ndarray], env_steps: int) -> None:
        """Writes new weights (and the learner's env step count) and bumps the version."""
        views = self._views()
        if len(arrays) != len(views):
            raise ValueError(f"publish got {len(arrays)} arrays for {len(views)} slots")
        with self._handles["lock"]:
            for view, array in zip(views, arrays, strict=True):
                view[...] = array
            self._handles["env_steps"].value = int(env_steps)
            self._handles["version"].value += 1

    def read_if_newer(self, version: int) -> tuple[int, int, list[np.ndarray]] | None:
        """(version, env_steps, copies of the arrays) if a newer version than `version` was
        published, else None."""
        if self.version == version:  # a racy peek; the copy below is under the lock
            return None
        with self._handles["lock"]:
            arrays = [view.copy() for view in self._views()]
            return self.version, int(self._handles["env_steps"].value), arrays

    def _views(self) -> list[np.ndarray]:
        raw = np.frombuffer(self._handles["buffer"], dtype=np.uint8)
        views = []
        for shape, dtype, offset in self._handles["layout"]:
            dtype = np.dtype(dtype)
            size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            views.append(raw[offset : offset + size].view(dtype).reshape(shape))
        return views
