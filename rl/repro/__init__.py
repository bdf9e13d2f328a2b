"""Reproducibility you can check: `python -m rl.repro check RUN_DIR` retrains the first steps of
a run twice and compares every checkpointed variable and array; `python -m rl.repro diff A B`
says what differs between two runs (hparams, code, packages, devices, seeds, eval curves).

What is and is not guaranteed to be bit-exact: docs/reproducibility.md.
"""
