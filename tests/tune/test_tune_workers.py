"""Two tuner processes on one SQLite study (the local form of many machines) finish exactly
`--trials` trials between them, each trial number once, each trial in its own run dir."""

from __future__ import annotations

import subprocess

import pytest
from optuna.trial import TrialState
from tune_fixtures import REPO_ROOT, load_study, tune_command, tune_env


# Tuner subprocesses (TF import, several tiny runs): 15-23 s each when the 2 cores are quiet,
# 98-169 s when other work shares them.
@pytest.mark.slow
def test_two_workers_share_one_study(tmp_path):
    out = tmp_path / "study"
    flags = ["--trials", "4", "--select", "False", "--pruner", "none"]
    workers = [
        subprocess.Popen(
            tune_command(out, *flags),
            cwd=REPO_ROOT,
            env=tune_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [worker.communicate(timeout=400) for worker in workers]
    for worker, (_stdout, stderr) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, stderr
        assert stderr == ""
    trials = load_study(out).trials
    numbers = [t.number for t in trials]
    assert numbers == sorted(set(numbers))  # no number twice
    surplus = [t for t in trials if t.user_attrs.get("surplus")]
    counted = [t for t in trials if not t.user_attrs.get("surplus")]
    described = [(t.number, t.state.name, t.user_attrs) for t in trials]
    assert [t.state for t in counted] == [TrialState.COMPLETE] * 4, described
    assert all(t.state == TrialState.FAIL for t in surplus)  # a claim that raced the budget
    # Both workers ran trials (each records its process id on the trials it claims).
    assert len({t.user_attrs["tuner_pid"] for t in counted}) == 2, described
    ran = sorted(p.name for p in (out / "trials").iterdir())
    assert ran == [f"trial_{t.number:04d}_seed_0" for t in counted]
    printed = [line for stdout, _ in outputs for line in stdout.splitlines()]
    assert sum(" COMPLETE value " in line for line in printed) == 4
