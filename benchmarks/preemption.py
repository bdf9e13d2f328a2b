#!/usr/bin/env python3
"""Seconds from SIGTERM to exit, and env steps lost, for each engine (rl/preemption.py).

For each case: start train.py, wait until it has trained for --after seconds past its first
checkpoint, send SIGTERM, time the exit (status 75 expected) and read the step it says it
saved; then start the same command again and read the step it resumes from (stopping it with
another SIGTERM once it has). Steps lost = saved - resumed (0 expected).

    .venv/bin/python -m benchmarks.preemption
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import tool_records

ROOT = Path(__file__).resolve().parents[1]
CASES = {
    "dqn_cartpole": ["--hparams", "dqn_cartpole", "--hparam_override", "stop_at_eval_return=None"],
    "ppo_cartpole": ["--hparams", "ppo_cartpole", "--hparam_override", "stop_at_eval_return=None"],
    "dqn_cartpole --num_workers 2": [
        "--hparams", "dqn_cartpole", "--num_workers", "2",
        "--hparam_override", "stop_at_eval_return=None",
    ],
    "ppo_tf_cartpole (compiled)": [
        "--hparams", "ppo_tf_cartpole",
        "--hparam_override", "stop_at_eval_return=None,train_steps=3000000",
    ],
}  # fmt: skip
STOPPED = re.compile(r"\[run_0\] SIGTERM: checkpoint at ([\d,]+) env steps")
RESUMED = re.compile(r"\[run_0\] resuming from checkpoint at ([\d,]+) env steps")


def _pointer(run_dir: Path) -> int:
    try:
        return json.loads((run_dir / "checkpoints" / "latest.json").read_text())["step"]
    except (FileNotFoundError, json.JSONDecodeError):
        return -1


def _start(args: list[str], log: Path) -> subprocess.Popen:
    with open(log, "w") as f:
        return subprocess.Popen(
            [sys.executable, "train.py", *args],
            cwd=ROOT,
            stdout=f,
            stderr=subprocess.STDOUT,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )


def _until(condition, proc: subprocess.Popen, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{proc.args} ended or timed out first")
        time.sleep(0.05)


def measure(name: str, args: list[str], directory: Path, after: float) -> tuple:
    output_dir = directory / re.sub(r"\W+", "_", name)
    run_dir = output_dir / "run_0"
    args = [*args, "--output_dir", str(output_dir)]
    log = output_dir.with_suffix(".log")
    proc = _start(args, log)
    _until(lambda: _pointer(run_dir) > 0, proc)
    time.sleep(after)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    status = proc.wait(120)
    seconds = time.monotonic() - sent
    (saved,) = [int(s.replace(",", "")) for s in STOPPED.findall(log.read_text())]
    log2 = output_dir.with_suffix(".resume.log")
    again = _start(args, log2)
    _until(lambda: RESUMED.search(log2.read_text()) is not None, again)
    again.send_signal(signal.SIGTERM)
    again.wait(120)
    resumed = int(RESUMED.search(log2.read_text()).group(1).replace(",", ""))
    return name, status, seconds, saved, saved - resumed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--after", type=float, default=3.0, help="seconds past 1st checkpoint")
    parser.add_argument("--dir", help="where the runs go (default: a temporary directory)")
    args = parser.parse_args()
    directory = Path(args.dir or tempfile.mkdtemp(prefix="preemption_"))
    directory.mkdir(parents=True, exist_ok=True)
    rows = [measure(name, case, directory, args.after) for name, case in CASES.items()]
    print(f"{'case':<30} {'status':>6} {'SIGTERM->exit s':>16} {'saved at':>10} {'lost':>5}")
    for name, status, seconds, saved, lost in rows:
        print(f"{name:<30} {status:>6} {seconds:>16.2f} {saved:>10,} {lost:>5}")
    keys = ("case", "status", "sigterm_to_exit_s", "saved_at", "steps_lost")
    rows = [dict(zip(keys, row, strict=True)) for row in rows]
    tool_records.append("preemption", {**vars(args), "dir": str(directory)}, rows)


if __name__ == "__main__":
    main()
