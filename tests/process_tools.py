"""Helpers of the worker lifecycle tests: a train.py subprocess we can watch, signal and
inspect for child processes (Linux /proc)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from conftest import default_signals

REPO_ROOT = Path(__file__).resolve().parents[1]


def descendants(pid: int) -> set[int]:
    """Pids of every living descendant of `pid` (children, grandchildren, ...)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                parents[int(entry)] = int(stat[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return {p for p in found if alive(p)}


def alive(pid: int) -> bool:
    """True if `pid` exists and is not a zombie."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def _stat(pid: int) -> tuple[str, str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
    return fields[0], fields[1]  # state, ppid


class TrainProcess:
    """`python train.py *args` from the repo root, with stdout/stderr to files."""

    def __init__(self, args: list[str], tmp_path: Path, extra_env: dict[str, str] | None = None):
        env = dict(os.environ)
        env.update(
            {"TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "", "PYTHONUNBUFFERED": "1"}
        )
        env.update(extra_env or {})
        self.stdout_path = tmp_path / "stdout.txt"
        self.stderr_path = tmp_path / "stderr.txt"
        self._stdout = open(self.stdout_path, "w")
        self._stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "train.py", *map(str, args)],
            cwd=REPO_ROOT,
            env=env,
            stdout=self._stdout,
            stderr=self._stderr,
            start_new_session=True,  # its own process group, as a terminal job has
            preexec_fn=default_signals,  # SIGINT as a terminal job has it, whoever ran pytest
        )
        self.children: set[int] = set()

    def wait_for(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Polls `condition` (and records the child processes) until true, exit or timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.children |= descendants(self.proc.pid)
            if condition():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.2)
        return False

    def interrupt(self) -> None:
        """Ctrl-C as a terminal sends it: SIGINT to every process of the job's group."""
        os.killpg(self.proc.pid, signal.SIGINT)

    def finish(self, timeout: float) -> int:
        """Waits for the exit and returns the status. On timeout it fails with the output and
        the stacks of every thread of the stuck train.py (SIGUSR1, see train.py), after killing
        the whole tree."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGUSR1)
            time.sleep(2.0)
            for pid in descendants(self.proc.pid) | {self.proc.pid}:
                os.kill(pid, signal.SIGKILL)
            self.proc.wait(10)
            self._stdout.close()
            self._stderr.close()
            raise AssertionError(f"no exit within {timeout} s; {self.describe()}") from None
        finally:
            self._stdout.close()
            self._stderr.close()

    def orphans(self, grace: float = 5.0) -> set[int]:
        """Recorded children still alive `grace` seconds after the exit (spawn's resource
        tracker, for one, needs a moment to notice its parent is gone)."""
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            left = {pid for pid in self.children if alive(pid)}
            if not left:
                return left
            time.sleep(0.2)
        return {pid for pid in self.children if alive(pid)}

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text()

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def describe(self) -> str:
        return (
            f"train.py exited {self.proc.returncode}\n--- stdout ---\n{self.stdout}\n"
            f"--- stderr ---\n{self.stderr}"
        )
