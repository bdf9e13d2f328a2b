"""Learning test run on every CI run: ppo_tf_cartpole, seed 0, reaches greedy eval >= 475.

The compiled path solves CartPole in ~10-20 s here, cheap enough for the default suite.
"""

from __future__ import annotations

import json

from conftest import describe


def test_ppo_tf_cartpole_solves(tmp_path, run_train):
    out = tmp_path / "out"
    proc = run_train(["--hparams", "ppo_tf_cartpole", "--output_dir", out, "--seed", "0"], 600)
    assert proc.returncode == 0, describe(proc)
    run = out / "run_0"
    pointer = json.loads((run / "checkpoints" / "latest.json").read_text())
    state = json.loads((run / "checkpoints" / pointer["directory"] / "trainer.json").read_text())
    assert state["last_eval_return"] >= 475.0, state
    assert state["first_step_at_threshold"] is not None, state
