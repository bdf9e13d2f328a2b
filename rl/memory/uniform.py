"""Uniform experience replay, and the storage + sampler `Replay` that every replay is built from.

As in Dopamine, uniform and prioritized replay differ only in the sampler. `sample` returns K
batches at once ([num_batches, batch_size, ...]): one numpy gather for K gradient steps. The
generator state is checkpointed, so a resumed run draws the batches an uninterrupted one would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Protocol

import numpy as np

from rl.memory.array_state import under_prefix, with_prefix
from rl.memory.ring_storage import FieldSpec, RingStorage
from rl.registry import register_memory
from rl.types import Batch

RESERVED_FIELDS = ("indices", "weights")
SAMPLER_PREFIX = "sampler/"


class Sampler(Protocol):
    """Chooses rows of a `RingStorage` to train on; owns any per-row state (priorities)."""

    name: str

    def on_add(self, indices: np.ndarray, priorities: np.ndarray | None) -> None: ...

    def sample(
        self, rng: np.random.Generator, size: int, shape: tuple[int, int], beta: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Returns int64 row indices in [0, size) and float32 IS weights, both shaped `shape`."""
        ...

    def update_priorities(
        self, indices: np.ndarray, priorities: np.ndarray, size: int, alpha: float | None = None
    ) -> None: ...

    def state_dict(self, size: int) -> dict[str, np.ndarray]: ...

    def load_state_dict(self, state: Mapping[str, np.ndarray], size: int) -> None: ...


class Replay:
    """A replay memory: `RingStorage` + `Sampler` + the numpy RNG the sampler draws from. The
    two parts are public: `storage.gather(indices)` reads rows without drawing (and without
    moving the RNG), `sampler` holds the priorities a prioritized replay draws by."""

    def __init__(self, storage: RingStorage, sampler: Sampler, seed: int) -> None:
        clash = sorted(set(storage.fields) & set(RESERVED_FIELDS))
        if clash:
            raise ValueError(f"replay field names {clash} are reserved for sample() outputs")
        self.storage = storage
        self.sampler = sampler
        self._rng = np.random.Generator(np.random.PCG64(seed))

    @property
    def capacity(self) -> int:
        return self.storage.capacity

    @property
    def size(self) -> int:
        return self.storage.size

    def __len__(self) -> int:
        return self.storage.size

    def add_batch(
        self, batch: Mapping[str, np.ndarray], priorities: np.ndarray | None = None
    ) -> np.ndarray:
        """Adds B items; `priorities` ([B], |TD error|) is ignored by uniform replay."""
        if priorities is not None:
            priorities = np.asarray(priorities, dtype=np.float64).reshape(-1)
            batch_sizes = {np.shape(v)[0] if np.ndim(v) else None for v in batch.values()}
            if batch_sizes != {priorities.size}:
                raise ValueError(
                    f"priorities has {priorities.size} values for a batch of "
                    f"{sorted(batch_sizes, key=str)} items"
                )
        # Checked above, before anything is written, so a bad call leaves the replay unchanged.
        indices = self.storage.add_batch(batch)
        self.sampler.on_add(indices, priorities)
        return indices

    def sample(self, batch_size: int, num_batches: int = 1, beta: float = 0.4) -> Batch:
        """Every field shaped [num_batches, batch_size, ...], plus "indices" for `update_priorities`
        and importance "weights" in (0, 1] (ones for uniform replay)."""
        if self.storage.size == 0:
            raise ValueError("cannot sample from an empty replay; add transitions first")
        if int(batch_size) < 1 or int(num_batches) < 1:
            raise ValueError(
                f"batch_size and num_batches must be >= 1, got {batch_size} and {num_batches}"
            )
        shape = (int(num_batches), int(batch_size))
        indices, weights = self.sampler.sample(self._rng, self.storage.size, shape, beta)
        out = self.storage.gather(indices)
        out["indices"] = indices
        out["weights"] = weights
        return out

    def update_priorities(
        self,
        indices: np.ndarray,
        priorities: np.ndarray,
        alpha: float | None = None,
        epsilon: float | None = None,
    ) -> None:
        """Sets rows' priorities from |TD error| (flattened; last duplicate wins); `alpha`,
        `epsilon` are the exponent and floor from now on (None keeps the current)."""
        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        priorities = np.asarray(priorities, dtype=np.float64).reshape(-1)
        if indices.shape != priorities.shape:
            raise ValueError(
                f"update_priorities got {indices.size} indices but {priorities.size} priorities"
            )
        self.sampler.update_priorities(indices, priorities, self.storage.size, alpha, epsilon)

    def state_dict(self) -> dict[str, np.ndarray]:
        """Plain numpy arrays (no pickle); field arrays are views: save before the next add."""
        return {
            **self.storage.state_dict(),
            "sampler": np.array(self.sampler.name),
            "rng_state": np.array(json.dumps(self._rng.bit_generator.state)),
            **with_prefix(SAMPLER_PREFIX, self.sampler.state_dict(self.storage.size)),
        }

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        sampler = str(state["sampler"])
        if sampler != self.sampler.name:
            raise ValueError(
                f"checkpoint holds a {sampler!r} replay, cannot load it into {self.sampler.name!r}"
            )
        rng_state = json.loads(str(state["rng_state"]))
        if rng_state.get("bit_generator") != "PCG64":
            raise ValueError(f"checkpoint replay RNG is {rng_state.get('bit_generator')!r}")
        self.storage.load_state_dict(state)
        self.sampler.load_state_dict(under_prefix(SAMPLER_PREFIX, state), self.storage.size)
        self._rng.bit_generator.state = rng_state


class UniformSampler:
    """Rows drawn uniformly with replacement from [0, size); every IS weight is 1."""

    name = "uniform"

    def on_add(self, indices: np.ndarray, priorities: np.ndarray | None) -> None:
        del indices, priorities

    def sample(
        self, rng: np.random.Generator, size: int, shape: tuple[int, int], beta: float
    ) -> tuple[np.ndarray, np.ndarray]:
        del beta
        indices = rng.integers(0, size, size=shape, dtype=np.int64)
        return indices, np.ones(shape, dtype=np.float32)

    def update_priorities(
        self,
        indices: np.ndarray,
        priorities: np.ndarray,
        size: int,
        alpha: float | None = None,
        epsilon: float | None = None,
    ) -> None:
        del indices, priorities, size, alpha, epsilon

    def state_dict(self, size: int) -> dict[str, np.ndarray]:
        del size
        return {}

    def load_state_dict(self, state: Mapping[str, np.ndarray], size: int) -> None:
        del state, size


@register_memory("uniform")
class UniformReplay(Replay):
    """Uniform experience replay (Mnih et al. 2015) over a preallocated ring of `capacity` rows."""

    def __init__(self, capacity: int, fields: FieldSpec, seed: int) -> None:
        super().__init__(RingStorage(capacity, fields), UniformSampler(), seed)
