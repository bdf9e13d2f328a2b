"""Hyper-parameter search on the one training loop: `python -m rl.tune` (docs/tuning.md). Every
trial trains through `rl.training.train`, the same path as train.py.
"""

from rl.tune import search_spaces  # noqa: F401  (registers the spaces: --space, train.py --list)
