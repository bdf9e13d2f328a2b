"""Large numpy arrays stored as content-addressed chunks that checkpoints share.

A replay buffer is most of a checkpoint (~7 GB for a 1M-transition Atari replay), and between
two checkpoints only the rows written since change. So a large array is cut into blocks, each a
file named by the hash of its bytes (XXH3-128: ~20 GB/s where SHA-256 manages ~1.5); a block a
previous checkpoint wrote is not written again. A chunk is removed once no kept checkpoint's
manifest lists it (`sweep`). Chunks are written to a temporary name and renamed (or as one gs://
object), so a chunk file that exists is whole; its name is checked against its bytes on read.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import tensorflow as tf
import xxhash

from rl.utils.files import join

CHUNK_BYTES = 1 << 20  # small enough that a few thousand new transitions rewrite little
LARGE_ARRAY_BYTES = 1 << 20  # smaller arrays stay in the checkpoint's own numpy.npz
WRITE_THREADS = 8  # chunk writes are I/O (and hashing releases the GIL): overlap them


class DamagedChunk(Exception):
    """A chunk's bytes do not match its name (or it is missing)."""


def blocks(array: np.ndarray) -> Iterator[np.ndarray]:
    """`array` as blocks of at most ~CHUNK_BYTES whose concatenated bytes are its C-order bytes; a
    row larger than a chunk is split along its own leading axis."""
    if array.ndim == 0 or array.nbytes <= CHUNK_BYTES:
        yield array
        return
    row_bytes = array[0].nbytes
    if row_bytes >= CHUNK_BYTES:
        for row in array:
            yield from blocks(row)
        return
    rows = max(1, CHUNK_BYTES // max(row_bytes, 1))
    for start in range(0, len(array), rows):
        yield array[start : start + rows]


def _digest(data: memoryview | bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


class ChunkStore:
    """The `chunks/` directory of one checkpoint store."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._known: set[str] | None = None  # chunk names on disk, listed once

    def _names_on_disk(self) -> set[str]:
        if self._known is None:
            exists = tf.io.gfile.isdir(self.directory)
            listed = tf.io.gfile.listdir(self.directory) if exists else []
            self._known = {n for n in listed if not n.endswith(".tmp")}
        return self._known

    def put(self, arrays: Mapping[str, np.ndarray]) -> tuple[dict[str, Any], dict[str, int], int]:
        """Writes the chunks of `arrays` not on disk yet: (layout for `get`, every used chunk's
        size, bytes written)."""
        if not arrays:
            return {}, {}, 0
        tf.io.gfile.makedirs(self.directory)
        known = self._names_on_disk()
        layout: dict[str, Any] = {}
        sizes: dict[str, int] = {}
        pending: dict[str, memoryview] = {}
        for name, array in arrays.items():
            array = np.asarray(array)
            names = []
            for block in blocks(array):
                data = memoryview(np.ascontiguousarray(block)).cast("B")
                digest = _digest(data)
                names.append(digest)
                sizes[digest] = len(data)
                if digest not in known and digest not in pending:
                    pending[digest] = data
            layout[name] = {"dtype": array.dtype.str, "shape": list(array.shape), "chunks": names}
        with concurrent.futures.ThreadPoolExecutor(WRITE_THREADS) as pool:
            list(pool.map(lambda item: self._write(*item), pending.items()))
        known.update(pending)
        return layout, sizes, sum(len(data) for data in pending.values())

    def _write(self, digest: str, data: memoryview) -> None:
        path = join(self.directory, digest)
        # A gs:// object appears only once completely uploaded; a file is renamed when whole.
        written = path if path.startswith("gs://") else f"{path}.tmp"
        with tf.io.gfile.GFile(written, "wb") as f:
            f.write(data.tobytes())
        if written != path:
            tf.io.gfile.rename(written, path, overwrite=True)

    def get(self, layout: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The arrays `put` stored, each chunk checked against its name (DamagedChunk)."""
        out = {}
        for name, entry in layout.items():
            array = np.empty(entry["shape"], dtype=np.dtype(entry["dtype"]))
            flat = array.reshape(-1).view(np.uint8)
            offset = 0
            for digest in entry["chunks"]:
                path = join(self.directory, digest)
                try:
                    with tf.io.gfile.GFile(path, "rb") as f:
                        data = f.read()
                except tf.errors.NotFoundError:
                    raise DamagedChunk(f"chunk {path} is missing") from None
                if _digest(data) != digest or offset + len(data) > flat.size:
                    raise DamagedChunk(f"chunk {path} does not match its checksum")
                flat[offset : offset + len(data)] = np.frombuffer(data, np.uint8)
                offset += len(data)
            if offset != flat.size:
                raise DamagedChunk(f"the chunks of {name!r} hold {offset} of {flat.size} bytes")
            out[name] = array
        return out

    def missing(self, names: Iterable[str], sizes: Mapping[str, int]) -> str | None:
        """The first of `names` not on disk (or, on a local disk, of the wrong size), or None."""
        self._known = None  # list afresh: this checks what is really there
        known = self._names_on_disk()
        for digest in names:
            path = join(self.directory, digest)
            if digest not in known:
                return f"chunk {path} is missing"
            if "://" not in path and tf.io.gfile.stat(path).length != sizes[digest]:
                return (
                    f"chunk {path} has {tf.io.gfile.stat(path).length} bytes, not {sizes[digest]}"
                )
        return None

    def sweep(self, referenced: set[str]) -> int:
        """Removes chunks no kept checkpoint lists (and killed writes' temporaries); how many."""
        if not tf.io.gfile.isdir(self.directory):
            return 0
        removed = 0
        for name in tf.io.gfile.listdir(self.directory):
            if name not in referenced:
                tf.io.gfile.remove(join(self.directory, name))
                removed += 1
        if self._known is not None:
            self._known &= referenced
        return removed
