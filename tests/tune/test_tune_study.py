"""`python -m rl.tune` end to end on ppo_tiny: a real SQLite study, trial run dirs, the fresh-seed
re-run, winner.json (which train.py trains from the study dir), trials.csv, the plots, the
HParams tab; and the checkout stays as it was."""

from __future__ import annotations

import csv
import json
import sqlite3
import subprocess

import pytest
from optuna.trial import TrialState
from tune_fixtures import REPO_ROOT, load_study, run_tune  # noqa: F401

import train
from rl import registry
from rl.hparams import HParams


def checkout_status() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout


# Tuner subprocesses (TF import, several tiny runs): 15-23 s each when the 2 cores are quiet,
# 98-169 s when other work shares them.
@pytest.mark.slow
def test_tiny_study_end_to_end(run_tune, tmp_path):  # noqa: F811
    out = tmp_path / "study"
    checkout = checkout_status()
    result = run_tune(out, "--trials", "2", "--top_k", "1", "--fresh_seeds", "1")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert checkout_status() == checkout  # the winner stays in the study dir
    # A real database: SQLite's own header, Optuna's tables, two complete trials.
    assert (out / "study.db").read_bytes()[:16] == b"SQLite format 3\x00"
    tables = sqlite3.connect(out / "study.db").execute("select name from sqlite_master").fetchall()
    assert ("trials",) in tables
    study = load_study(out)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE, TrialState.COMPLETE]
    # The objective: the last evaluation (last_k 1) of the one seed, read back from the run dir.
    for trial in study.trials:
        run = out / "trials" / f"trial_{trial.number:04d}_seed_0"
        rows = list(csv.DictReader(open(run / "progress.csv")))
        assert [int(r["env_steps"]) for r in rows] == [128, 256]
        assert trial.value == float(rows[-1]["eval_return_mean"])
        assert 1e-4 <= trial.params["lr"] <= 3e-3
        assert json.loads((run / "hparams.json").read_text())  # a normal run dir
        assert list((run / "train").glob("events.out.tfevents.*"))  # HParams tab's session
    # trials.csv: one row per trial with its value; the plots are PNG files.
    rows = list(csv.DictReader(open(out / "trials.csv")))
    assert [(r["number"], r["state"]) for r in rows] == [("0", "COMPLETE"), ("1", "COMPLETE")]
    for name in ("optimization_history.png", "param_importances.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The best trial re-ran on fresh seed 10000 (disjoint from tuning seed 0) and won.
    best = max(study.trials, key=lambda t: t.value)
    winner = json.loads((out / "winner.json").read_text())
    assert winner["trial"] == best.number and winner["fresh_seeds"] == [10000]
    fresh = out / "fresh" / f"trial_{best.number:04d}_seed_10000"
    last = list(csv.DictReader(open(fresh / "progress.csv")))[-1]
    assert winner["fresh_mean"] == float(last["eval_return_mean"])
    assert winner["hparams_set"] == "ppo_tiny" and winner["published_module"] is None
    assert winner["hparam_override"] == f"lr={best.params['lr']!r}"
    assert not list(out.rglob("*.py"))
    # train.py trains the winner from the study dir: the parent set with the tuned key.
    run = tmp_path / "tuned_run"
    flags = ["--hparams", "ppo_tiny", "--winner", str(out / "winner.json")]
    assert train.main([*flags, "--output_dir", str(run)]) == 0
    hparams = HParams.from_json((run / "run_0" / "hparams.json").read_text())
    assert hparams.lr.value(0) == pytest.approx(best.params["lr"], rel=1e-6)
    [changed] = hparams.diff(registry.get_hparams("ppo_tiny")())
    assert changed.startswith("lr: ")
    last = list(csv.DictReader(open(run / "run_0" / "progress.csv")))[-1]
    assert int(last["env_steps"]) == 256 and float(last["eval_return_mean"]) >= 0
