"""A campaign killed mid-cell and run again ends each cell exactly where an uninterrupted
campaign does: benchmarks/campaigns/tiny.toml (3,000 env steps, checkpoints every 1,000), one
cell per side. For each side, `python -m benchmarks.campaign run tiny --only SIDE` runs once
straight through into one results folder; into another, with the cells' folders in a `--work`
folder elsewhere (a disk that outlives the checkout), it is SIGKILLed (its whole process group:
runner and cell) once the cell has a checkpoint and before it ends, then run again with the same
command. The two records must have the same evaluation curve (every step, mean and std; SB3:
every episode's return) and env steps, and the second must show the resume (two attempts).

The SB3 cell needs the peers venv (.venv-peers): without it that case is skipped, saying so;
.ci/run's peers step builds it and runs this test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import campaign
from benchmarks.campaign_spec import ROOT, load

pytestmark = pytest.mark.e2e

KILL_FROM_STEP = 1000  # the first checkpoint of a 3,000-step tiny cell
TIMEOUT = 300


def _start(results: Path, side: str, log: Path, work: Path | None = None) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "benchmarks.campaign", "run", "tiny", "--only", side]
    cmd += ["--results", str(results), *(["--work", str(work)] if work else [])]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("a") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip


def _finish(proc: subprocess.Popen, log: Path) -> None:
    assert proc.wait(timeout=TIMEOUT) == 0, log.read_text()[-4000:]


def _record(results: Path) -> dict:
    lines = (results / "tiny.jsonl").read_text().splitlines()
    assert len(lines) == 1, lines
    return json.loads(lines[0])


def _kill_after_checkpoint(proc: subprocess.Popen, folder: Path, cell, log: Path) -> int:
    """SIGKILL the runner's process group once the cell has a checkpoint; the step it had."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        step = campaign.checkpoint_step(folder, cell)
        if step is not None and step >= KILL_FROM_STEP:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return step
        assert proc.poll() is None, f"ended before its first checkpoint:\n{log.read_text()}"
        time.sleep(0.05)
    raise AssertionError(f"no checkpoint in {TIMEOUT} s:\n{log.read_text()[-4000:]}")


@pytest.mark.parametrize("side", ["ours", "sb3"])
def test_killed_cell_resumes_to_the_uninterrupted_result(side: str, tmp_path: Path) -> None:
    if side == "sb3" and not campaign.PEERS_PYTHON.exists():
        pytest.skip("the peers venv .venv-peers is absent: benchmarks/peers/setup.sh builds it")
    (cell,) = [c for c in load("tiny")[2] if c.side == side]
    straight, killed, work = tmp_path / "straight", tmp_path / "killed", tmp_path / "work"
    log = tmp_path / "log.txt"

    _finish(_start(straight, side, log), log)
    expected = _record(straight)

    proc = _start(killed, side, log, work)
    folder = campaign.cell_dir(work, cell)
    step = _kill_after_checkpoint(proc, folder, cell, log)
    assert step < cell.budget
    assert not (killed / "tiny.jsonl").exists(), "the killed campaign recorded the cell"
    assert not campaign.cell_dir(killed, cell).exists(), "the cell ran outside --work"
    _finish(_start(killed, side, log, work), log)
    resumed = _record(killed)

    assert resumed["eval_curve"] == expected["eval_curve"]
    assert "WORK/tiny/" in resumed["command"] and str(tmp_path) not in resumed["command"]
    assert resumed["env_steps"] == expected["env_steps"] >= cell.budget
    assert resumed["resumes"] == 1 and len(resumed["attempts"]) == 2
    assert not resumed["attempts"][0]["complete"] and resumed["attempts"][1]["complete"]
    # each attempt names the code it ran, the killed one too (read before it started), and the
    # record the code that began the cell
    assert all(a["git"]["revision"] for a in resumed["attempts"])
    assert resumed["git"] == resumed["attempts"][0]["git"]
    if side == "sb3":
        assert resumed["detail"]["resumed_at"] == [step]
        assert resumed["detail"]["env_state"]["mode"] == "pickle"
    # the record's measurements are there and add up over the two attempts
    assert resumed["cpu_seconds"] > 0 and resumed["peak_tree_rss_mb"] > 0
    total = sum(a["wall_seconds"] for a in resumed["attempts"])
    assert resumed["wall_seconds"] == pytest.approx(total, abs=0.05)
