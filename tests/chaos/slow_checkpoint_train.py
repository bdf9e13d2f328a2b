"""train.py with slow checkpoint writes and tiny chunks: the subject of tests/test_chaos.py.

`python tests/chaos/slow_checkpoint_train.py DELAY train.py-args...` runs train.py's `main`
with every rename of a temporary file (`*.tmp`: the atomic writes of checkpoint files, the
pointer and run files) paused DELAY seconds before it happens, a chunk's a tenth of that; arrays
of 4 KB or more are stored as 4 KB chunks, so even a tiny replay is spread over many shared
chunks. The kills the test sends are real; only the writer is slowed, so that they land in the
middle of checkpoint writes often.

The slowdown is installed when train.main first imports rl's chunk store (an import hook), after
it started noting SIGTERMs: a signal during the imports is honoured as in a plain train.py.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import time
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))

import train  # noqa: E402  (the repo's train.py)

SMALL_BYTES = 4096
CHUNKS_MODULE = "rl.utils.chunks"


class SlowWritesOnImport(importlib.abc.MetaPathFinder):
    """Finds rl's chunk store as Python would, and slows the writes once it is loaded."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def find_spec(self, name, path, target=None):
        if name != CHUNKS_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        load = spec.loader.exec_module

        def load_then_slow_down(module: ModuleType) -> None:
            load(module)
            slow_down_writes(module, self.delay)

        spec.loader.exec_module = load_then_slow_down
        return spec


def slow_down_writes(chunks: ModuleType, delay: float) -> None:
    """Small chunks (set before rl/utils/checkpoint.py imports the threshold), and a pause
    before every rename of a temporary file."""
    import tensorflow as tf

    chunks.CHUNK_BYTES = SMALL_BYTES
    chunks.LARGE_ARRAY_BYTES = SMALL_BYTES
    rename = tf.io.gfile.rename

    def slow_rename(source: str, target: str, overwrite: bool = False) -> None:
        if str(source).endswith(".tmp"):
            time.sleep(delay / 10 if "/chunks/" in str(target) else delay)
        rename(source, target, overwrite)

    tf.io.gfile.rename = slow_rename


def main() -> int:
    sys.meta_path.insert(0, SlowWritesOnImport(float(sys.argv[1])))
    return train.main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
