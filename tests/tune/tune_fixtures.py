"""Helpers of the `python -m rl.tune` tests: the tuner as a real process, and its study read back
through Optuna from the SQLite file it wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

# A tiny study: ppo_tiny (256 env steps, an evaluation every 128), one key, one seed.
TINY = ["--hparams", "ppo_tiny", "--space", "ppo", "--keys", "lr", "--seeds_per_trial", "1"]
TINY += ["--last_k", "1", "--startup_trials", "2"]


def tune_command(output_dir: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "rl.tune", *TINY, "--output_dir", str(output_dir), *flags]


def tune_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT), "CUDA_VISIBLE_DEVICES": ""}


@pytest.fixture
def run_tune():
    """Runs the tuner to the end; returns the CompletedProcess."""

    def run(output_dir: Path, *flags: str, timeout: float = 240) -> subprocess.CompletedProcess:
        return subprocess.run(
            tune_command(output_dir, *flags),
            cwd=REPO_ROOT,
            env=tune_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run


def load_study(output_dir: Path, name: str = "ppo_tiny-ppo"):
    import optuna

    return optuna.load_study(study_name=name, storage=f"sqlite:///{output_dir / 'study.db'}")
