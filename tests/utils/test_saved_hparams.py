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


def test_a_run_saved_before_a_key_existed_resumes_unless_that_key_is_changed(tmp_path):
    import pytest

    from rl.errors import UserError
    from rl.utils.run_dir import check_resume_compatible

    declared = registry.get_hparams("dqn_tiny")().freeze()
    data = json.loads(declared.to_json())
    del data["hparams"]["eval"]["value"]["step_budget"]
    (tmp_path / "hparams.json").write_text(json.dumps(data))
    check_resume_compatible(str(tmp_path), declared, False, declared)  # no error
    with pytest.raises(UserError, match=r"eval.step_budget: \(absent\) -> null"):
        check_resume_compatible(str(tmp_path), declared, False)  # without the declared set
    changed = registry.get_hparams("dqn_tiny")().override("eval.step_budget=100").freeze()
    with pytest.raises(UserError, match=r"eval.step_budget: null -> 100"):
        check_resume_compatible(str(tmp_path), changed, False, declared)
