"""rl.utils.run_dir_lock: one process per run dir, released by the kernel when the holder dies.

The other processes here are real ones (subprocesses, and a fork of one): flock excludes open
file descriptions, so only separate processes show that it works. They load the lock module
without `rl/__init__.py` (which imports TensorFlow), so each starts in well under a second.
"""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import REPO_ROOT, tree_hashes

from rl.errors import UserError
from rl.utils.run_dir_lock import LOCK_FILE, RunDirLock, locked_run_dirs

# Loads rl.utils.run_dir_lock (and rl.errors) without running rl/__init__.py.
PRELUDE = f"""
import os, signal, sys, time, types
package = types.ModuleType("rl")
package.__path__ = [{str(REPO_ROOT / "rl")!r}]
sys.modules["rl"] = package
from rl.errors import UserError
from rl.utils.run_dir_lock import RunDirLock, locked_run_dirs
"""


def python(code: str) -> list[str]:
    return [sys.executable, "-c", PRELUDE + textwrap.dedent(code)]


def try_lock_elsewhere(*run_dirs: Path) -> str:
    """Tries `locked_run_dirs(run_dirs)` in another process: 'locked' or the UserError text."""
    code = f"""
    try:
        with locked_run_dirs({[str(d) for d in run_dirs]!r}):
            print("locked")
    except UserError as error:
        print(error)
    """
    proc = subprocess.run(python(code), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


class Holder:
    """Another process that takes the lock on `run_dir`, says so, then sleeps until killed;
    with `fork=True` it first forks a child (no exec) that sleeps too and reports its pid. The
    child says when os.fork() has returned in it (its after-fork hooks, which close the lock's
    descriptor, have run): on a busy machine it may be scheduled well after the parent."""

    def __init__(self, run_dir: Path, fork: bool = False):
        code = f"""
        lock = RunDirLock({str(run_dir)!r})
        lock.acquire()
        child = os.fork() if {fork!r} else None
        if child == 0:
            os.write(1, b"forked\\n")  # one write(2) each: the two lines cannot interleave
            time.sleep(120)
            os._exit(0)
        os.write(1, f"locked {{child}}\\n".encode())
        time.sleep(120)
        """
        self.proc = subprocess.Popen(python(code), stdout=subprocess.PIPE, text=True)
        lines = [self.proc.stdout.readline().split() for _ in range(2 if fork else 1)]
        words = next((w for w in lines if w and w[0] == "locked"), None)
        assert words is not None and (not fork or ["forked"] in lines), lines
        self.child = int(words[1]) if words[1] != "None" else None

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


@pytest.mark.e2e  # flock between real processes
def test_a_second_process_is_refused_with_the_holders_pid_and_the_fix(tmp_path):
    run_dir = tmp_path / "out" / "run_0"
    with RunDirLock(str(run_dir)) as lock:
        assert lock.held
        message = try_lock_elsewhere(run_dir)
        assert message == (
            f"run dir {run_dir} is in use by another train.py (pid {os.getpid()} on host "
            f"{platform.node()}); wait for it to finish or choose another --output_dir"
        )
    assert try_lock_elsewhere(run_dir) == "locked"  # released on exit of the `with`


@pytest.mark.e2e  # flock between real processes
def test_the_kernel_releases_the_lock_of_a_killed_holder(tmp_path):
    run_dir = tmp_path / "run_0"
    holder = Holder(run_dir)
    try:
        expected = rf"in use by another train.py \(pid {holder.proc.pid} on host "
        with pytest.raises(UserError, match=expected):
            RunDirLock(str(run_dir)).acquire()
    finally:
        holder.kill()  # SIGKILL: no clean-up code of the holder runs
    assert (run_dir / LOCK_FILE).exists()  # left behind, but no longer locked
    with RunDirLock(str(run_dir)) as lock:
        assert lock.held
        assert f'"pid": {os.getpid()}' in (run_dir / LOCK_FILE).read_text()


@pytest.mark.e2e  # flock between real processes
def test_a_forked_child_does_not_keep_its_dead_parents_lock(tmp_path):
    run_dir = tmp_path / "run_0"
    holder = Holder(run_dir, fork=True)
    try:
        holder.kill()
        os.kill(holder.child, 0)  # the forked child is still alive...
        with RunDirLock(str(run_dir)) as lock:  # ...and does not hold the lock
            assert lock.held
    finally:
        os.kill(holder.child, signal.SIGKILL)


def test_a_start_that_fails_leaves_the_disk_as_it_was(tmp_path):
    # A run dir (and output dir) created to hold the lock are removed if nothing else was written.
    out = tmp_path / "out"
    with RunDirLock(str(out / "run_0")):
        assert (out / "run_0" / LOCK_FILE).is_file()
    assert not out.exists()
    # An existing run dir: only the lock file goes, everything else stays byte for byte.
    run_dir = tmp_path / "existing" / "run_0"
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "progress.csv").write_text("env_steps\n300\n")
    before = tree_hashes(tmp_path)
    with RunDirLock(str(run_dir)):
        pass
    assert tree_hashes(tmp_path) == before
    # A run that wrote into the dir it created keeps it (only the lock file is removed).
    with RunDirLock(str(tmp_path / "new" / "run_0")):
        (tmp_path / "new" / "run_0" / "hparams.json").write_text("{}")
    assert sorted(os.listdir(tmp_path / "new" / "run_0")) == ["hparams.json"]


def test_all_run_dirs_or_none(tmp_path):
    out = tmp_path / "out"
    holder = Holder(out / "run_1")
    try:
        with pytest.raises(UserError, match=r"run dir .*run_1 is in use"):
            with locked_run_dirs([str(out / "run_0"), str(out / "run_1")]):
                raise AssertionError("entered although run_1 is held")
        assert not (out / "run_0").exists()  # run_0's lock was released and its dir removed
        assert try_lock_elsewhere(out / "run_0") == "locked"
    finally:
        holder.kill()


def test_remote_run_dirs_are_not_locked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for path in ("gs://bucket/out/run_0", "ram://out/run_0"):
        lock = RunDirLock(path)
        lock.acquire()
        assert not lock.held
        lock.release()
    assert list(tmp_path.iterdir()) == []  # no local "gs:" directory
