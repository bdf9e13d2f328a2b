"""`train.py --strategy mirrored` end to end: real dqn_tiny and drqn_tiny runs (a replay agent,
and one that learns on sequences with burn-in and prioritized sequence replay) over 2 logical
CPU replicas train, evaluate, checkpoint and are played back by test mode, with stderr empty."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, describe, run_train_process, stderr_lines, train_env

# e2e: two logical CPU devices exist only if set before TF starts: a fresh train.py
pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent


# dqn_tiny in the slow tier (~20 s): drqn_tiny runs the replay path and sequences on top, and
# tests/systems/test_tpu_sets_smoke.py trains dqn_tiny through train.py under the strategy.
@pytest.mark.parametrize(
    "hparams_set", [pytest.param("dqn_tiny", marks=pytest.mark.slow), "drqn_tiny"]
)
def test_train_py_strategy_mirrored_trains_checkpoints_and_plays(tmp_path, hparams_set):
    out = tmp_path / "out"
    args = ["--hparams", hparams_set, "--train_steps", "300", "--output_dir", str(out)]
    proc = subprocess.run(
        [sys.executable, str(HERE / "train_on_two_cpus.py"), *args, "--strategy", "mirrored"],
        cwd=REPO_ROOT,
        env=train_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, describe(proc)
    assert stderr_lines(proc.stderr) == [], describe(proc)
    assert proc.stdout.strip().splitlines()[-1] == "replicas 2"
    run_dir = out / "run_0"
    pointer = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    assert pointer["step"] == 300
    with open(run_dir / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(row["env_steps"]) for row in rows][-1] == 300
    # Test mode (one device) restores the checkpoint the mirrored run wrote.
    played = run_train_process([*args, "--training", "False", "--test_episodes", "2"])
    assert played.returncode == 0, describe(played)
    assert "checkpoint at 300 env steps" in played.stdout
    assert "test return" in played.stdout
