# ruff: noqa: E501  (the table of cases reads best one case a line)
"""Every bad input of `python -m rl.tune` exits 2 with one line on stderr naming the problem and
the fix, before anything is written (in-process: no trial is ever reached)."""

from __future__ import annotations

import pytest
from tune_fixtures import run_tune  # noqa: F401

from rl.registry import register_search_space
from rl.tune import cli
from rl.tune.search_space import Param, SearchSpace

register_search_space(
    "test_reversed_range",
    SearchSpace("test_reversed_range", "lr from high to low", (Param("lr", "float", 1e-3, 1e-4),)),
)
register_search_space(
    "test_float_for_int",
    SearchSpace("test_float_for_int", "an int key", (Param("n_epochs", "float", 1.5, 4.5),)),
)
register_search_space(
    "test_log_from_zero",
    SearchSpace(
        "test_log_from_zero", "log from 0", (Param("ent_coef", "float", 0.0, 0.1, log=True),)
    ),
)
register_search_space(
    "test_bad_choice",
    SearchSpace(
        "test_bad_choice", "a word", (Param("clip_range", "categorical", choices=("wide",)),)
    ),
)

BASE = ["--hparams", "ppo_tiny", "--space", "ppo", "--trials", "2", "--last_k", "1"]
TF_TINY = ["--hparams", "ppo_tf_tiny", "--space", "ppo", "--trials", "1", "--keys", "lr"]
PBT = ["--hparams", "ppo_tf_tiny", "--space", "ppo", "--keys", "lr", "--pbt"]  # no --trials

# fmt: off
CASES = {
    "unknown space": (["--hparams", "ppo_tiny", "--space", "sac", "--trials", "2"], ["search space", "'sac'", "dqn, ppo"]),
    "key the set lacks": (["--hparams", "dqn_tiny", "--space", "ppo", "--trials", "2"], ["clip_range", "dqn_tiny"]),
    "unknown --keys": ([*BASE, "--keys", "lr,nope"], ["no key 'nope'", "its keys"]),
    "reversed range": (["--hparams", "ppo_tiny", "--space", "test_reversed_range", "--trials", "2"], ["lr", "low < high"]),
    "float range of an int key": (["--hparams", "ppo_tiny", "--space", "test_float_for_int", "--trials", "2"], ["n_epochs=1.5", "int"]),
    "log range from 0": (["--hparams", "ppo_tiny", "--space", "test_log_from_zero", "--trials", "2"], ["log range", "low > 0"]),
    "choice of the wrong type": (["--hparams", "ppo_tiny", "--space", "test_bad_choice", "--trials", "2"], ["clip_range='wide'"]),
    "unknown set": (["--hparams", "ppo_nope", "--space", "ppo", "--trials", "2"], ["hparams set", "ppo_nope"]),
    "bad override": ([*BASE, "--hparam_override", "lr=fast"], ["lr"]),
    "storage scheme": ([*BASE, "--storage", "mongodb://db/optuna"], ["storage URL", "postgresql://"]),
    "storage in memory": ([*BASE, "--storage", "sqlite:///:memory:"], ["needs a file"]),
    "storage dir missing": ([*BASE, "--storage", "sqlite:////no/such/dir/s.db"], ["does not exist"]),
    "storage server unreachable": ([*BASE, "--storage", "postgresql://optuna:pw@127.0.0.1:1/optuna"], ["cannot open it"]),
    "grpc without port": ([*BASE, "--storage", "grpc://localhost"], ["grpc://HOST:PORT"]),
    "no trials": (["--hparams", "ppo_tiny", "--space", "ppo", "--trials", "0"], ["--trials", ">= 1"]),
    "tuning seeds reach the judging seeds": ([*BASE, "--seed", "9999", "--seeds_per_trial", "2"], ["fresh judging seeds start at 10000"]),
    "last_k above the evaluations": ([*BASE[:-2], "--last_k", "3"], ["--last_k 3", "2 evaluations"]),
    "workers locally": ([*BASE, "--workers", "2"], ["--sys gke", "--storage"]),
    "unknown sampler": ([*BASE, "--sampler", "grid"], ["--sampler", "tpe"]),
    "negative timeout": ([*BASE, "--timeout", "-1"], ["--timeout"]),
    "population of 0": ([*BASE, "--population", "0"], ["--population", ">= 1"]),
    "population with shape keys": (["--hparams", "ppo_tf_tiny", "--space", "ppo", "--trials", "2", "--population", "2"], ["n_epochs, batch_size", "--keys lr,clip_range"]),
    "population on a gymnasium env": ([*BASE, "--keys", "lr", "--population", "2"], ["TF-ops env", "'CartPole-v1'"]),
    "no trials given": (["--hparams", "ppo_tiny", "--space", "ppo"], ["--trials is required"]),
    "trials with pbt": ([*PBT, "--trials", "1", "--population", "4"], ["drop --trials"]),
    "pbt with too few members": ([*PBT, "--population", "3"], ["--population >= 4", "got 3"]),
    "pbt quantile above a half": ([*PBT, "--population", "4", "--pbt_quantile", "0.7"], ["--pbt_quantile", "(0, 0.5]"]),
    "pbt interval off the evaluations": ([*PBT, "--population", "4", "--pbt_interval", "100"], ["--pbt_interval 100", "eval.every_steps (128)"]),
    "pbt flag without pbt": ([*TF_TINY, "--population", "4", "--pbt_interval", "128"], ["--pbt_interval", "add --pbt"]),
    "pbt of an agent without a many-seeds program": (["--hparams", "dqn_tf_tiny", "--space", "dqn", "--keys", "lr", "--population", "4", "--pbt"], ["agent 'dqn'", "many-seeds"]),
    "pbt of a key a run fixes": ([*PBT[:-2], "lr,gamma", "--population", "4", "--pbt"], ["changes gamma", "leave it out of --keys"]),
}
# fmt: on


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input(case, capsys, tmp_path):
    argv, keywords = CASES[case]
    out = tmp_path / "out"
    assert cli.main([*argv, "--output_dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m rl.tune: error: ") and err.count("\n") == 1, err
    for keyword in keywords:
        assert keyword in err, (keyword, err)
    assert not out.exists() and list(tmp_path.iterdir()) == []


# Tuner subprocesses (TF import, several tiny runs): 15-23 s each when the 2 cores are quiet,
# 98-169 s when other work shares them.
@pytest.mark.slow
def test_a_different_search_on_the_same_study(run_tune, tmp_path):  # noqa: F811
    """A second command with other flags on an existing study: exit 2, the study untouched."""
    from tune_fixtures import load_study

    out = tmp_path / "study"
    assert run_tune(out, "--trials", "1", "--select", "False").returncode == 0
    before = (out / "study.db").read_bytes()
    result = run_tune(out, "--trials", "1", "--select", "False", "--train_steps", "128")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "train_steps=256" in result.stderr and "--study_name" in result.stderr
    assert len(load_study(out).trials) == 1
    assert (out / "study.db").read_bytes() == before
