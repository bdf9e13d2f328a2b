"""Which saved-hparams differences a resume accepts without --allow_hparams_change."""

from __future__ import annotations

import pytest

from rl import registry
from rl.errors import UserError
from rl.utils.run_dir import HPARAMS_FILE, check_resume_compatible


def test_jit_compile_may_change_on_resume_but_not_what_is_trained(tmp_path):
    saved = registry.get_hparams("dqn_tiny")()
    saved.jit_compile = True  # e.g. a run saved on a GPU (auto) resumed on a CPU without XLA
    (tmp_path / HPARAMS_FILE).write_text(saved.to_json())
    now = registry.get_hparams("dqn_tiny")()
    assert now.jit_compile is False
    check_resume_compatible(str(tmp_path), now, allow_change=False)  # no error
    now.lr = 0.5
    with pytest.raises(UserError, match="different hparams.*lr"):
        check_resume_compatible(str(tmp_path), now, allow_change=False)
