"""Hparams sets written by `python -m rl.tune` (generated: one import per tuned set)."""
