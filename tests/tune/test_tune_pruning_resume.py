"""The pruner really stops a trial that reports below the median (constructed: two finished
trials that returned 1e6 at every evaluation, which no ppo_tiny evaluation reaches), and a
tuner killed with SIGKILL mid-trial is continued by the same command: the trial it was running
is marked FAIL and re-run with the same values, finished trials are not redone."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import time

import optuna
import pytest
from optuna.trial import TrialState, create_trial
from tune_fixtures import (
    REPO_ROOT,
    load_study,
    run_tune,  # noqa: F401  (a fixture)
    tune_command,
    tune_env,
)

from rl import registry
from rl.tune import cli
from rl.tune.objective import distributions


def test_a_trial_below_the_median_is_pruned_at_its_first_evaluation(capsys, tmp_path):
    out = tmp_path / "study"
    out.mkdir()
    space = registry.get_search_space("ppo").restricted(["lr"])
    study = optuna.create_study(
        study_name="ppo_tiny-ppo", storage=f"sqlite:///{out / 'study.db'}", direction="maximize"
    )
    for _ in range(2):  # steps of seed 0 (128, 256) and seed 1 (256 + 128, 256 + 256)
        study.add_trial(
            create_trial(
                state=TrialState.COMPLETE,
                value=1e6,
                params={"lr": 1e-3},
                distributions=distributions(space),
                intermediate_values={128: 1e6, 256: 1e6, 384: 1e6, 512: 1e6},
            )
        )
    capsys.readouterr()  # Optuna's own line about the study created above
    argv = ["--hparams", "ppo_tiny", "--space", "ppo", "--keys", "lr", "--last_k", "1"]
    argv += ["--trials", "3", "--seeds_per_trial", "2", "--startup_trials", "2"]
    argv += ["--warmup_steps", "0"]  # the median rule from the first evaluation on
    assert cli.main([*argv, "--select", "False", "--output_dir", str(out)]) == 0
    assert capsys.readouterr().err == ""
    trial = load_study(out).trials[2]
    assert trial.state == TrialState.PRUNED
    assert list(trial.intermediate_values) == [128]  # reported once, then stopped
    run = out / "trials" / "trial_0002_seed_0"
    rows = list(csv.DictReader(open(run / "progress.csv")))
    assert [int(r["env_steps"]) for r in rows] == [128]  # of a 256-step budget
    assert trial.intermediate_values[128] == float(rows[0]["eval_return_mean"]) < 1e6
    # The loop stopped the run there on the callback's word, and checkpointed it as complete.
    state = json.loads((run / "checkpoints" / "step_000000000128" / "trainer.json").read_text())
    assert state["stopped_by"] == "pruner" and state["stopped_early"]
    assert not (out / "trials" / "trial_0002_seed_1").exists()  # the second seed never ran


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


# Tuner subprocesses (TF import, several tiny runs): 15-23 s each when the 2 cores are quiet,
# 98-169 s when other work shares them.
@pytest.mark.slow
def test_resume_after_kill_9(run_tune, tmp_path):  # noqa: F811
    out = tmp_path / "study"
    # 384 steps: two more evaluations after the first, time enough to kill trial 1 mid-run.
    flags = ["--trials", "2", "--select", "False", "--train_steps", "384"]
    tuner = subprocess.Popen(
        tune_command(out, *flags),
        cwd=REPO_ROOT,
        env=tune_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Kill it once trial 1 has trained past its first evaluation (trial 0 is then complete).
        first_eval = out / "trials" / "trial_0001_seed_0" / "progress.csv"
        _wait_for(lambda: first_eval.exists() or tuner.poll() is not None, 240, "trial 1")
        assert tuner.poll() is None, tuner.stderr.read()
        tuner.send_signal(signal.SIGKILL)
        tuner.wait(timeout=30)
    finally:
        if tuner.poll() is None:
            tuner.kill()
    killed = load_study(out).trials
    assert [t.state for t in killed] == [TrialState.COMPLETE, TrialState.RUNNING]
    result = run_tune(out, *flags)  # the same command
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "trial 1: its worker died; marked failed and queued again" in result.stdout
    trials = load_study(out).trials
    assert [t.state for t in trials] == [TrialState.COMPLETE, TrialState.FAIL, TrialState.COMPLETE]
    assert trials[0].datetime_complete == killed[0].datetime_complete  # not redone
    assert trials[2].params == trials[1].params  # the killed trial, re-run
    assert trials[2].value is not None
    rows = list(csv.DictReader(open(out / "trials.csv")))
    assert [r["state"] for r in rows] == ["COMPLETE", "FAIL", "COMPLETE"]
