"""Preallocated numpy ring storage: the "storage" half of a replay (Dopamine's storage + sampler).

Preallocating makes a too-large capacity fail at start, not hours later. Rows fill in order, so
the first `size` rows are the filled ones and all that a checkpoint saves.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import DTypeLike

from rl.types import Batch

# Field name -> (per-item shape, dtype), e.g. {"obs": ((4,), np.float32), "action": ((), np.int64)}.
FieldSpec = Mapping[str, tuple[tuple[int, ...], DTypeLike]]

FIELD_PREFIX = "field/"


class RingStorage:
    """Fixed-capacity arrays, one per field, written as a ring buffer."""

    def __init__(self, capacity: int, fields: FieldSpec) -> None:
        if int(capacity) < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self._specs: dict[str, tuple[tuple[int, ...], np.dtype]] = {
            name: (tuple(int(d) for d in shape), np.dtype(dtype))
            for name, (shape, dtype) in fields.items()
        }
        self._arrays = {
            name: np.zeros((self.capacity, *shape), dtype=dtype)
            for name, (shape, dtype) in self._specs.items()
        }
        self.next_index = 0  # the row the next write starts at
        self.size = 0  # rows [0, size) are filled

    @property
    def fields(self) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
        return dict(self._specs)

    def __len__(self) -> int:
        return self.size

    def add_batch(self, batch: Mapping[str, np.ndarray]) -> np.ndarray:
        """Writes B items (leading dim of every field) and returns the int64 rows written."""
        batch_size = self._check_batch(batch)
        indices = np.arange(self.next_index, self.next_index + batch_size, dtype=np.int64)
        indices %= self.capacity
        start, end = self.next_index, self.next_index + batch_size
        for name, array in self._arrays.items():
            values = batch[name]
            if end <= self.capacity:
                # Contiguous slice assignment is several times faster than fancy indexing.
                array[start:end] = values
            else:
                array[indices] = values
        self.next_index = end % self.capacity
        self.size = min(self.size + batch_size, self.capacity)
        return indices

    @property
    def nbytes(self) -> int:
        """Bytes of the field arrays (allocated at full capacity when the storage is made)."""
        return sum(array.nbytes for array in self._arrays.values())

    def gather(self, indices: np.ndarray) -> Batch:
        """Rows at `indices` (any shape S) for every field, each shaped [*S, *field_shape]."""
        indices = np.asarray(indices)
        return {name: array.take(indices, axis=0) for name, array in self._arrays.items()}

    def state_dict(self) -> dict[str, np.ndarray]:
        """Plain arrays; the field arrays are views of the live buffers (no copy of a possibly
        multi-GB replay), so write them out before adding more."""
        state = {
            "capacity": np.array(self.capacity, dtype=np.int64),
            "size": np.array(self.size, dtype=np.int64),
            "next_index": np.array(self.next_index, dtype=np.int64),
        }
        for name, array in self._arrays.items():
            state[FIELD_PREFIX + name] = array[: self.size]
        return state

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        capacity = int(state["capacity"])
        if capacity != self.capacity:
            raise ValueError(
                f"checkpoint replay capacity {capacity} != this replay's capacity {self.capacity}"
            )
        saved = {k[len(FIELD_PREFIX) :] for k in state if k.startswith(FIELD_PREFIX)}
        if saved != set(self._specs):
            raise ValueError(
                f"checkpoint replay fields {sorted(saved)} != this replay's {sorted(self._specs)}"
            )
        size, next_index = int(state["size"]), int(state["next_index"])
        if not 0 <= size <= capacity or not 0 <= next_index < capacity:
            raise ValueError(f"corrupt replay checkpoint: size {size}, next_index {next_index}")
        for name, (shape, dtype) in self._specs.items():
            values = np.asarray(state[FIELD_PREFIX + name])
            if values.shape != (size, *shape) or values.dtype != dtype:
                raise ValueError(
                    f"checkpoint field {name!r} is {values.dtype}{list(values.shape)}, "
                    f"expected {dtype}{[size, *shape]}"
                )
        for name, array in self._arrays.items():
            array[:size] = state[FIELD_PREFIX + name]
            array[size:] = 0
        self.size, self.next_index = size, next_index

    def _check_batch(self, batch: Mapping[str, np.ndarray]) -> int:
        if set(batch) != set(self._specs):
            missing = sorted(set(self._specs) - set(batch))
            extra = sorted(set(batch) - set(self._specs))
            raise ValueError(
                f"batch fields do not match the replay's: missing {missing}, unexpected {extra}; "
                f"expected {sorted(self._specs)}"
            )
        batch_size = None
        for name, (shape, _) in self._specs.items():
            got = np.shape(batch[name])
            if (
                len(got) != len(shape) + 1
                or got[1:] != shape
                or (batch_size is not None and got[0:1] != (batch_size,))
            ):
                expected = ["B", *shape] if batch_size is None else [batch_size, *shape]
                raise ValueError(f"field {name!r} has shape {list(got)}, expected {expected}")
            batch_size = got[0]
        assert batch_size is not None
        if batch_size > self.capacity:
            raise ValueError(f"batch of {batch_size} items exceeds replay capacity {self.capacity}")
        return int(batch_size)
