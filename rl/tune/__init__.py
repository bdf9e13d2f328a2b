"""Hyper-parameter search on the one training loop: `python -m rl.tune` (docs/tuning.md).

Optuna studies in a real database (an SQLite file in the output dir by default, any Optuna
storage URL with `--storage`). Every trial trains its seeds through `rl.training.train`, the
same path as train.py, and an evaluation callback (`rl.tune.objective.TrialReporter`) feeds
the pruner at every evaluation. The winner of a fresh-seed re-run goes to the study's
directory (`train.py --winner DIR/winner.json`); `--publish` makes it a named hparams set.
"""

# The registered search spaces (`--space NAME`, listed by `train.py --list`).
from rl.tune import search_spaces  # noqa: E402, F401
