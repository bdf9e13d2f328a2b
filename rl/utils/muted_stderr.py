"""File descriptor 2 sent to /dev/null while TensorFlow (or an env module that imports it) loads.

TF logs C++ INFO lines while it loads, before TF_CPP_MIN_LOG_LEVEL applies; on stderr they would
break the one-line error contract. RL_SHOW_TF_LOGS=1 keeps them. Imports nothing from `rl`:
rl/__init__.py uses it early, and env worker processes that never import `rl` unpickle it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def muted_stderr() -> Iterator[None]:
    """Mutes file descriptor 2 (C++ logging too) for the block; RL_SHOW_TF_LOGS=1 keeps it."""
    if os.environ.get("RL_SHOW_TF_LOGS"):
        yield
        return
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(devnull)
        os.close(saved)
