"""Reproducibility you can check: `python -m rl.repro check` and `diff` (rl/repro/__main__.py);
what is and is not guaranteed to be bit-exact: docs/reproducibility.md.
"""
