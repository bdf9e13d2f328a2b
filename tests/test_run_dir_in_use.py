"""Two train.py runs on one run dir: the second exits 2 with one line and writes nothing.

One long dqn_tiny training holds run_0's lock (rl/utils/run_dir_lock.py). It is stopped
(SIGSTOP: it keeps its lock but writes nothing) while the same command is started again, so the
run dir can be compared byte for byte before and after that second command. Test mode
(`--training False`) takes no lock and runs at the same time. Then the holder is killed with
SIGKILL, and a third training command resumes from its last checkpoint: no stale lock.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import time

import pytest
from conftest import (
    REPO_ROOT,
    describe,
    run_train_process,
    run_train_processes_concurrently,
    stderr_lines,
    train_command,
    train_env,
    tree_hashes,
)

# e2e: two train.py processes on one run dir (SIGSTOP, SIGKILL)
pytestmark = pytest.mark.e2e


def _start_training(args: list[str], log_path) -> subprocess.Popen:
    with open(log_path, "w") as log:  # a file, not a pipe: a full pipe would stall it
        return subprocess.Popen(
            train_command(args), cwd=REPO_ROOT, env=train_env(), stdout=log, stderr=log
        )


def _wait_for_checkpoint(proc: subprocess.Popen, pointer, log_path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not pointer.exists():
        assert proc.poll() is None, f"first run exited {proc.returncode}:\n{log_path.read_text()}"
        assert time.monotonic() < deadline, f"no checkpoint in {timeout} s:\n{log_path.read_text()}"
        time.sleep(0.1)


def test_a_second_training_on_a_run_dir_in_use_exits_2_and_changes_nothing(tmp_path):
    out = tmp_path / "out"
    run_dir = out / "run_0"
    args = ["--hparams", "dqn_tiny", "--train_steps", "1000000", "--output_dir", str(out)]
    log_path = tmp_path / "first.log"
    first = _start_training(args, log_path)
    try:
        _wait_for_checkpoint(first, run_dir / "checkpoints" / "latest.json", log_path)
        first.send_signal(signal.SIGSTOP)  # holds its lock, writes nothing while stopped
        before = tree_hashes(run_dir)
        assert json.loads((run_dir / ".lock").read_text())["pid"] == first.pid
        again, tested = run_train_processes_concurrently(
            [args, ["--hparams", "dqn_tiny", "--output_dir", out, "--training", "False"]],
            timeout=120,  # without the lock the second would train 1,000,000 steps
        )

        assert again.returncode == 2, describe(again)
        assert stderr_lines(again.stderr) == [
            f"train.py: error: run dir {run_dir} is in use by another train.py (pid {first.pid} "
            f"on host {platform.node()}); wait for it to finish or choose another --output_dir"
        ], describe(again)
        after = tree_hashes(run_dir)
        # Test mode ran meanwhile without the lock; it writes only its own test/ events.
        assert tested.returncode == 0, describe(tested)
        assert "[run_0] test return" in tested.stdout, describe(tested)
        assert any(path.startswith("test/events.out.tfevents.") for path in after)
        assert {k: v for k, v in after.items() if not k.startswith("test")} == before
    finally:
        first.send_signal(signal.SIGKILL)  # kill -9, even while stopped: no clean-up runs
        first.wait(timeout=30)
    assert (run_dir / ".lock").exists()  # left behind by the killed run, but unlocked

    step = json.loads((run_dir / "checkpoints" / "latest.json").read_text())["step"]
    resumed = run_train_process([*args[:2], "--train_steps", step + 300, *args[4:]])
    assert resumed.returncode == 0, describe(resumed)
    assert stderr_lines(resumed.stderr) == [], describe(resumed)
    assert f"[run_0] resuming from checkpoint at {step:,} env steps" in resumed.stdout
    assert json.loads((run_dir / "checkpoints" / "latest.json").read_text())["step"] >= step + 300
    assert not (run_dir / ".lock").exists()  # a run that ends removes its lock file
    assert os.path.isfile(run_dir / "progress.csv")
