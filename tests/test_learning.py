"""Learning tests: real envs trained to a threshold with a fixed seed (`-m slow`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def train_and_read_state(
    tmp_path: Path, hparams: str, seed: int, override: str = "", timeout: float = 1200
) -> dict:
    cmd = [
        sys.executable,
        str(ROOT / "train.py"),
        "--hparams",
        hparams,
        "--seed",
        str(seed),
        "--output_dir",
        str(tmp_path),
        "--hparam_override",
        override,
    ]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    checkpoints = tmp_path / "run_0" / "checkpoints"
    pointer = json.loads((checkpoints / "latest.json").read_text())
    return json.loads((checkpoints / pointer["directory"] / "trainer.json").read_text())


@pytest.mark.slow
def test_dqn_cartpole_seed0_reaches_475(tmp_path):
    # The greedy eval (10 episodes) must reach a mean of 475 within the set's 50k steps;
    # training stops at the first evaluation that does.
    state = train_and_read_state(tmp_path, "dqn_cartpole", 0, "stop_at_eval_return=475.0")
    assert state["first_step_at_threshold"] is not None, state
    assert state["last_eval_return"] >= 475.0
