"""`python -m rl.tune --population N` (in-process): trials asked from Optuna N at a time and
trained as one compiled population (`rl.tune.population`), told back with the sequential
objective; the pruner stops a population member that reports below the median."""

from __future__ import annotations

import csv
import json

import optuna
import pytest
from optuna.trial import TrialState, create_trial
from tune_fixtures import load_study

from rl import registry
from rl.tune import cli
from rl.tune.objective import distributions

KEYS = "lr,ent_coef,gamma"
ARGV = ["--hparams", "ppo_tf_tiny", "--space", "ppo", "--keys", KEYS, "--last_k", "2"]
ARGV += ["--seeds_per_trial", "2", "--startup_trials", "2", "--select", "False"]


def _rows(run) -> list[dict[str, str]]:
    return list(csv.DictReader(open(run / "progress.csv")))


def test_a_population_study_scores_each_trial_on_its_own_runs(capsys, tmp_path):
    out = tmp_path / "study"
    argv = [*ARGV, "--trials", "5", "--population", "3", "--pruner", "none"]
    argv += ["--output_dir", str(out)]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    study = load_study(out, "ppo_tf_tiny-ppo")
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 5  # 3, then 2
    for trial in study.trials:
        scores = []
        for seed in (0, 1):
            run = out / "trials" / f"trial_{trial.number:04d}_seed_{seed}"
            rows = _rows(run)
            assert [int(r["env_steps"]) for r in rows] == [128, 256]  # the whole budget
            scores.append(sum(float(r["eval_return_mean"]) for r in rows[-2:]) / 2)
            # The run dir holds the trial's own hparams (it resumes and tests alone).
            saved = json.loads((run / "hparams.json").read_text())["hparams"]
            assert saved["gamma"]["value"] == trial.params["gamma"]
            assert saved["lr"]["value"] == f"constant({trial.params['lr']!r})"
        assert trial.value == sum(scores) / 2
    assert "trial 4 COMPLETE" in captured.out


# Slow (~4 s of CPU): the median rule is the one tests/tune/test_tune_pruning_resume.py checks
# in the default tier; here it reaches a population's members.
@pytest.mark.slow
def test_a_population_member_below_the_median_is_pruned(capsys, tmp_path):
    out = tmp_path / "study"
    out.mkdir()
    space = registry.get_search_space("ppo").restricted(KEYS.split(","))
    study = optuna.create_study(
        study_name="ppo_tf_tiny-ppo", storage=f"sqlite:///{out / 'study.db'}", direction="maximize"
    )
    params = {"lr": 1e-3, "ent_coef": 1e-4, "gamma": 0.99}
    for _ in range(2):  # steps of seed 0 (128, 256) and seed 1 (256 + 128, 256 + 256)
        study.add_trial(
            create_trial(
                state=TrialState.COMPLETE,
                value=1e6,
                params=params,
                distributions=distributions(space),
                intermediate_values={128: 1e6, 256: 1e6, 384: 1e6, 512: 1e6},
            )
        )
    capsys.readouterr()
    argv = [*ARGV, "--trials", "4", "--population", "2", "--warmup_steps", "0"]
    assert cli.main([*argv, "--output_dir", str(out)]) == 0
    assert capsys.readouterr().err == ""
    for trial in load_study(out, "ppo_tf_tiny-ppo").trials[2:]:
        assert trial.state == TrialState.PRUNED
        assert list(trial.intermediate_values) == [128]  # its first seed's first evaluation
        for seed in (0, 1):  # both seeds stopped there: the second on its trial's word
            rows = _rows(out / "trials" / f"trial_{trial.number:04d}_seed_{seed}")
            assert [int(r["env_steps"]) for r in rows] == [128]
