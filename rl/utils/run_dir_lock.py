"""One training process per run dir: an advisory `fcntl.flock` on `<run_dir>/.lock`.

Two runs on one `--output_dir` would prune each other's checkpoints and append to the same logs;
the second exits 2. flock because the kernel drops the lock when the holder dies in any way
(kill -9, OOM): no stale lock. The descriptor is non-inheritable and a forked child closes its
copy at once, so no stray child holds a dead run's lock. `release` removes a run dir `acquire`
created if nothing else was written there, so a failed start leaves the disk as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
from collections.abc import Iterator, Sequence

from rl.errors import UserError

LOCK_FILE = ".lock"

_HELD_FDS: set[int] = set()  # descriptors of locks held by this process (closed after a fork)


def _close_in_forked_child() -> None:
    for fd in _HELD_FDS:
        with contextlib.suppress(OSError):
            os.close(fd)  # the child's copy only; the parent's lock stays held
    _HELD_FDS.clear()


os.register_at_fork(after_in_child=_close_in_forked_child)


def missing_dirs(path: str) -> list[str]:
    """`path` and its ancestors that do not exist yet, deepest first."""
    missing = []
    while not os.path.exists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return missing


def _same_file(fd: int, path: str) -> bool:
    try:
        here, held = os.stat(path), os.fstat(fd)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)


def _holder(lock_path: str) -> str:
    try:
        with open(lock_path) as f:
            data = json.load(f)
        return f"pid {int(data['pid'])} on host {data['host']}"
    except (OSError, ValueError, KeyError, TypeError):  # being written or unreadable
        return "pid unknown"


class RunDirLock:
    """The lock on one run dir; `acquire` raises `UserError` if another process holds it."""

    def __init__(self, run_dir: str) -> None:
        self.run_dir = run_dir
        self.path = os.path.join(os.path.abspath(run_dir), LOCK_FILE)
        self._fd: int | None = None
        self._created_dirs: list[str] = []  # deepest first

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Takes the lock without waiting, and writes this process's pid and host into it."""
        if "://" in self.run_dir or self.held:  # gs://, ram://, ...: no flock there
            return
        directory = os.path.dirname(self.path)
        while True:
            missing = missing_dirs(directory)
            if len(missing) > len(self._created_dirs):
                self._created_dirs = missing
            os.makedirs(directory, exist_ok=True)
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except FileNotFoundError:  # a failed start removed the dir it had created: again
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise UserError(
                    f"run dir {self.run_dir} is in use by another train.py "
                    f"({_holder(self.path)}); wait for it to finish or choose another --output_dir"
                ) from None
            # A holder unlinks the file before it unlocks: a lock taken on that unlinked file
            # excludes nobody, so lock the file now at the path instead.
            if _same_file(fd, self.path):
                break
            os.close(fd)
        self._fd = fd
        _HELD_FDS.add(fd)
        record = json.dumps({"pid": os.getpid(), "host": platform.node()}) + "\n"
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode(), 0)

    def release(self) -> None:
        """Removes the lock file (so a finished run leaves its dir as it found it), then unlocks;
        directories `acquire` created are removed too if nothing else was written into them."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            with contextlib.suppress(OSError):
                if _same_file(fd, self.path):
                    os.unlink(self.path)  # while still locked (see `_same_file` in `acquire`)
            with contextlib.suppress(OSError):
                for directory in self._created_dirs:  # deepest first
                    os.rmdir(directory)  # fails (and stops) at the first non-empty one
        finally:
            self._created_dirs = []
            _HELD_FDS.discard(fd)
            os.close(fd)  # closing the last descriptor releases the flock

    def __enter__(self) -> RunDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


@contextlib.contextmanager
def locked_run_dirs(run_dirs: Sequence[str]) -> Iterator[None]:
    """Holds the lock on every run dir in `run_dirs` (all or none: a held one releases the
    others taken before it, and raises its `UserError`)."""
    with contextlib.ExitStack() as stack:
        for run_dir in run_dirs:
            stack.enter_context(RunDirLock(run_dir))
        yield
