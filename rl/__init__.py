"""rl: a TensorFlow 2 research codebase for deep reinforcement learning.

Importing `rl` fills every registry through explicit imports (no star imports, no scanning).
"""

import os
import sys

from rl.utils.muted_stderr import muted_stderr  # imports nothing of rl

# Python commands (`python -m rl.tune`, ...) import `rl` first: TensorFlow loads here without
# its C++ start-up lines on stderr (a process that imported TF already is left alone).
if "tensorflow" not in sys.modules:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    with muted_stderr():
        import tensorflow  # noqa: F401

# isort: split
from rl import agents, envs, hparams, memory, models, systems, tune  # noqa: E402, F401

__version__ = "0.1.0"
