"""Hparams sets written by `python -m rl.tune` (generated: one import per tuned set)."""

from rl.hparams.tuned import (  # noqa: F401
    ppo_cartpole_tuned,
)
