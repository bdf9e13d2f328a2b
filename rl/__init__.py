"""rl: a TensorFlow 2 research codebase for deep reinforcement learning.

Importing `rl` fills every registry through explicit imports (no star imports, no scanning).
"""

import os
import sys


def _import_tensorflow_quietly() -> None:
    """TF 2.21 logs C++ INFO lines while it loads, before TF_CPP_MIN_LOG_LEVEL applies; stderr
    carries errors only (`python -m rl.tune`, `python -m rl.repro` import `rl` before any code
    of theirs runs). RL_SHOW_TF_LOGS=1 keeps them; a process that imported TF already is left
    alone."""
    if "tensorflow" in sys.modules or os.environ.get("RL_SHOW_TF_LOGS"):
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        import tensorflow  # noqa: F401
    finally:
        os.dup2(saved, 2)
        os.close(devnull)
        os.close(saved)


_import_tensorflow_quietly()

# isort: split
from rl import agents, envs, hparams, memory, models, systems  # noqa: E402, F401

__version__ = "0.1.0"
