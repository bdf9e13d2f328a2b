"""benchmarks/peers/sb3_cell.py in process (the peers venv: SB3, rl-zoo3; .ci/run's peers step):
a cell stops at the first evaluation that reaches `--stop-at`, and `--horizon zoo` gives the
schedules the zoo entry's n_timesteps."""

from __future__ import annotations

from pathlib import Path

import pytest

sb3_cell = pytest.importorskip(
    "benchmarks.peers.sb3_cell", reason="SB3 is in the peers venv (benchmarks/peers/setup.sh)"
)

TINY = '{"learning_starts": 100, "buffer_size": 2000, "policy_kwargs": "dict(net_arch=[8])"}'


def _run(tmp_path: Path, *extra: str) -> dict:
    args = ["--algo", "dqn", "--env", "CartPole-v1", "--budget", "2000", "--eval-every", "500"]
    args += ["--eval-episodes", "2", "--checkpoint-every", "1000", "--hyperparams", TINY]
    return sb3_cell.run(sb3_cell.parse([*args, "--dir", str(tmp_path), *extra]))


def test_a_cell_stops_at_the_first_evaluation_that_reaches_the_threshold(tmp_path: Path) -> None:
    # CartPole pays 1 a step and no episode is shorter than 8 steps: the first evaluation does.
    # (The zoo's DQN trains every 256 steps, so its learn() chunks end at 512, 1024, ...)
    result = _run(tmp_path / "stop", "--stop-at", "8")
    assert [e["step"] for e in result["evals"]] == [512] and result["env_steps"] == 512
    result = _run(tmp_path / "budget", "--horizon", "zoo")
    assert len(result["evals"]) == 4 and result["env_steps"] >= 2000
    assert result["horizon"] == 50_000  # rl-zoo3's n_timesteps for DQN on CartPole-v1
