"""train.py with slow checkpoint writes and tiny chunks: the subject of tests/test_chaos.py.

`python tests/chaos/slow_checkpoint_train.py DELAY train.py-args...` runs train.py's `main`
after making every atomic file write (checkpoint files, the pointer, run files) pause DELAY
seconds between writing its temporary file and renaming it, and every chunk write pause a
tenth of that; arrays of 4 KB or more are stored as 4 KB chunks, so even a tiny replay is
spread over many shared chunks. The kills the test sends are real; only the writer is slowed,
so that they land in the middle of checkpoint writes often.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))

import train  # noqa: E402  (the repo's train.py)


def main() -> int:
    delay = float(sys.argv[1])
    train_main = train._main

    def slow_main(argv: list[str], early_sigterm: list[float]) -> int:
        # Runs where train.main imports rl (and TensorFlow): after it started noting SIGTERMs,
        # so a signal during these imports is honoured as in a plain train.py.
        _slow_down_writes(delay)
        return train_main(argv, early_sigterm)

    train._main = slow_main
    return train.main(sys.argv[2:])


def _slow_down_writes(delay: float) -> None:
    import tensorflow as tf

    from rl.utils import checkpoint, chunks, files

    def slow_atomic_write(path: str, data: bytes) -> None:
        tmp = f"{path}.tmp"
        with tf.io.gfile.GFile(tmp, "wb") as f:
            f.write(data)
        time.sleep(delay)
        tf.io.gfile.rename(tmp, path, overwrite=True)

    files.atomic_write_bytes = slow_atomic_write
    write_chunk = chunks.ChunkStore._write

    def slow_chunk_write(self, digest, data):
        time.sleep(delay / 10)
        write_chunk(self, digest, data)

    chunks.ChunkStore._write = slow_chunk_write
    chunks.CHUNK_BYTES = 4096
    checkpoint.LARGE_ARRAY_BYTES = 4096


if __name__ == "__main__":
    sys.exit(main())
