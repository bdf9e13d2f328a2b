"""Learning tests (slow tier): ppo_tf_cartpole (seed 0) and dqn_tf_cartpole (seed 1) reach a
greedy eval mean >= 475 on tf/CartPole-v1, in ~10-20 s each here (mostly tracing and XLA
compilation)."""

from __future__ import annotations

import json

import pytest
from conftest import describe


@pytest.mark.slow
@pytest.mark.parametrize("hparams_set, seed", [("ppo_tf_cartpole", 0), ("dqn_tf_cartpole", 1)])
def test_tf_cartpole_solves(tmp_path, train_here, hparams_set, seed):
    out = tmp_path / "out"
    args = ["--hparams", hparams_set, "--output_dir", out, "--seed", str(seed)]
    proc = train_here(args)
    assert proc.returncode == 0, describe(proc)
    run = out / "run_0"
    pointer = json.loads((run / "checkpoints" / "latest.json").read_text())
    state = json.loads((run / "checkpoints" / pointer["directory"] / "trainer.json").read_text())
    assert state["last_eval_return"] >= 475.0, state
    assert state["first_step_at_threshold"] is not None, state
