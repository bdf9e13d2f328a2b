"""`--publish`: the winner's generated module registers `<set>_tuned` = the parent set + the
tuned keys (typed, through the override path), the tuned dir's `__init__` imports it, and that
set trains through the one loop."""

from __future__ import annotations

import importlib.util

import pytest

from rl import registry, training
from rl.tune.objective import TrialConfig
from rl.tune.winners import FreshScore, write_tuned_module


def test_the_generated_set_loads_and_trains(tmp_path):
    winner = FreshScore(
        trial_number=7,
        tuning_value=48.5,
        params={"lr": 0.00123, "clip_range": "linear(0.3, 0.0, 32)", "n_epochs": 3},
        scores=(40.0, 50.0),
    )
    config = TrialConfig("ppo_tiny", "stop_at_eval_return=None", 256, (0, 1), 1, str(tmp_path))
    path = write_tuned_module(
        winner, config, "ppo_tiny-ppo", "postgresql://optuna:secret@db/optuna", [10000, 10001],
        256, tmp_path / "tuned",
    )  # fmt: skip
    text = " ".join(path.read_text().split())  # the docstring is wrapped
    assert "secret" not in text and "postgresql://optuna:***@db/optuna" in text
    assert "fresh-seed score 45.00 ± 5.00 over seeds [10000, 10001] (40.0, 50.0)" in text
    assert "under --hparam_override 'stop_at_eval_return=None'" in text  # named, not applied
    assert "Study 'ppo_tiny-ppo'" in text
    assert (
        "from rl.hparams.tuned import (  # noqa: F401\n    ppo_tiny_tuned,\n)"
        in (tmp_path / "tuned" / "__init__.py").read_text()
    )
    spec = importlib.util.spec_from_file_location("ppo_tiny_tuned_generated", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        hparams = registry.get_hparams("ppo_tiny_tuned")()
        parent = registry.get_hparams("ppo_tiny")()
        assert sorted(line.split(":")[0] for line in hparams.diff(parent)) == [
            "clip_range",
            "lr",
            "n_epochs",
        ]
        assert hparams.lr.value(0) == pytest.approx(0.00123)
        assert hparams.clip_range.spec() == "linear(0.3, 0.0, 32)"
        assert hparams.n_epochs == 3 and isinstance(hparams.n_epochs, int)
        assert hparams.stop_at_eval_return == parent.stop_at_eval_return
        hparams.freeze()
        [result] = training.train(hparams, [str(tmp_path / "run")], [3], "ppo_tiny_tuned")
        assert result.env_steps == 256 and result.last_eval_return is not None
    finally:  # the test's own registration, so that other tests see the registry as it was
        registry.hparams.unregister("ppo_tiny_tuned")
