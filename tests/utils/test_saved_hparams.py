"""Test mode plays a run saved by an older version: keys declared since then take the current
defaults (`saved_hparams(run_dir, defaults=...)`), every saved value wins."""

from __future__ import annotations

import json

import rl  # noqa: F401
from rl import registry
from rl.utils.run_dir import saved_hparams


def test_keys_declared_since_the_run_was_saved_take_the_defaults(tmp_path):
    current = registry.get_hparams("dqn_tiny")().freeze()
    data = json.loads(current.to_json())
    del data["hparams"]["eval"]["value"]["step_budget"]  # declared after this run was saved
    data["hparams"]["lr"]["value"] = "constant(0.125)"  # the run's own value
    (tmp_path / "hparams.json").write_text(json.dumps(data))
    assert saved_hparams(str(tmp_path)) is not None
    assert "step_budget" not in saved_hparams(str(tmp_path)).eval.keys()
    filled = saved_hparams(str(tmp_path), defaults=current)
    assert filled.eval.step_budget == current.eval.step_budget
    assert str(filled.lr) != str(current.lr) and "0.125" in str(filled.lr)
    assert saved_hparams(str(tmp_path / "missing"), defaults=current) is None
