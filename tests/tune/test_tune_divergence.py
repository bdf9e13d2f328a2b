"""A trial whose evaluation returns NaN is recorded as FAIL and counts toward `--trials`; the
study goes on and ends (no crash, nothing on stderr). The NaN is injected where the loop hands
an evaluation to the tuner's callback, so the test does not depend on making PPO diverge."""

from __future__ import annotations

import math

from optuna.trial import TrialState
from tune_fixtures import load_study

from rl import training
from rl.tune import cli


def test_a_nan_evaluation_fails_the_trial_not_the_study(capsys, monkeypatch, tmp_path):
    def train_to_nan(hparams, run_dirs, seeds, hparams_set, flags=None, callbacks=()):
        for callback in callbacks:
            callback(None, 128, {"eval/return_mean": math.nan})
        raise AssertionError("the tuner's callback let a NaN evaluation through")

    monkeypatch.setattr(training, "train", train_to_nan)
    out = tmp_path / "study"
    argv = ["--hparams", "ppo_tiny", "--space", "ppo", "--keys", "lr", "--last_k", "1"]
    argv += ["--trials", "2", "--seeds_per_trial", "1", "--output_dir", str(out)]
    assert cli.main(argv) == 0
    stdout, stderr = capsys.readouterr()
    assert stderr == ""
    trials = load_study(out).trials
    assert [t.state for t in trials] == [TrialState.FAIL, TrialState.FAIL]
    for trial in trials:
        assert trial.user_attrs["counted"] is True
        assert trial.user_attrs["failure"] == ("Diverged: evaluation at 128 env steps returned nan")
    assert "[tune] trial 1 failed: Diverged" in stdout
    assert "no trial completed; nothing to select" in stdout
    assert (out / "trials.csv").read_text().count("Diverged") == 2
