"""Small file helpers over tf.io.gfile, so local paths, gs:// and ram:// all work."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import tensorflow as tf


def join(*parts: str) -> str:
    return "/".join(p.rstrip("/") for p in parts if p)


def atomic_write_bytes(path: str, data: bytes) -> None:
    """Writes `data` to a temporary name, then renames it over `path` (readers never see half)."""
    tmp = f"{path}.tmp"
    with tf.io.gfile.GFile(tmp, "wb") as f:
        f.write(data)
    tf.io.gfile.rename(tmp, path, overwrite=True)


def atomic_write_json(path: str, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


def read_json(path: str) -> Any:
    with tf.io.gfile.GFile(path, "r") as f:
        return json.load(f)


def save_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())


def load_npz(path: str) -> dict[str, np.ndarray]:
    """Loads arrays without pickle: a run dir is data, never code."""
    with tf.io.gfile.GFile(path, "rb") as f:
        data = f.read()
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}
