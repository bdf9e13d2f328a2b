"""Hyper-parameters: the `HParams` class, step schedules and the registered hparams sets.

Importing this package registers every schedule and every hparams set (explicit imports, no
star imports), so `rl.registry.hparams` and `rl.registry.schedules` are complete afterwards.
"""

from rl.hparams.hparams import HParams, TypeSpec
from rl.hparams.schedules import Schedule, as_schedule, parse_schedule

# isort: split
# --- registered hparams sets: one module per algorithm family, imported for registration ---
# Below: one line per set module, sorted by name, e.g. `from rl.hparams import dqn` followed by a
# `noqa: F401` comment (the import is for its registration side effect).
from rl.hparams import dqn  # noqa: F401

__all__ = ["HParams", "Schedule", "TypeSpec", "as_schedule", "parse_schedule"]
