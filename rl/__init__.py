"""rl: a TensorFlow 2 research codebase for deep reinforcement learning.

Importing `rl` fills every registry through explicit imports (no star imports, no scanning).
"""

from rl import agents, envs, hparams, memory, models, systems  # noqa: F401

__version__ = "0.1.0"
