"""Hyper-parameter search on the one training loop: `python -m rl.tune` (docs/tuning.md). Every
trial trains through `rl.training.train`, the same path as train.py, and an evaluation callback
feeds the pruner.
"""

# The registered search spaces (`--space NAME`, listed by `train.py --list`).
from rl.tune import search_spaces  # noqa: E402, F401
