"""Process plumbing: whether a process still runs, and how the child processes (actor
processes, env worker processes) live and die.

`pid_alive` is how a restarted tuner or a new process tells a dead one's leftovers (its RUNNING
trials, its private compile-cache directory) from a live one's. The lifecycle rules (only the
main process handles Ctrl-C and SIGTERM; children die with their parent; stopping is polite,
then `terminate`, then `kill`, each with a deadline) are docs/workers.md, "Lifecycle". The
parent-death signal (prctl PR_SET_PDEATHSIG) is set in rl/workers/boot.py and
rl/envs/grouped_env.py, which cannot import this module early.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # the main process's to handle


@contextlib.contextmanager
def children_ignore_stop_signals() -> Iterator[None]:
    """Processes started inside this block ignore SIGINT and SIGTERM (an ignored disposition
    survives exec; a handler would not).

    Python keeps an inherited SIG_IGN for SIGINT instead of installing its KeyboardInterrupt
    handler, so a spawned child never sees Ctrl-C. Outside the main thread signals cannot be
    changed, and this is a no-op.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, signal.SIG_IGN) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def parent_alive(parent_pid: int) -> bool:
    """Whether the process that started us still runs (we get re-parented when it dies)."""
    return os.getppid() == parent_pid


def stop_processes(
    processes: Sequence[multiprocessing.process.BaseProcess], timeout: float = 5.0
) -> None:
    """Joins `processes` until `timeout`, then terminates (SIGTERM) and finally kills the rest.

    Callers signal a polite stop first (e.g. an Event the children poll); this only makes sure
    that, one way or another, no child outlives the call.
    """
    _join_within(processes, timeout)
    for process in processes:
        if process.is_alive():
            process.terminate()
    _join_within(processes, 2.0)
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join(2.0)


def pid_alive(pid: int) -> bool:
    """True while process `pid` exists (also when it belongs to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _join_within(processes: Sequence[multiprocessing.process.BaseProcess], seconds: float) -> None:
    """Joins every started process, all of them within `seconds` in total."""
    deadline = time.monotonic() + seconds
    for process in processes:
        if process.pid is not None:
            process.join(max(0.0, deadline - time.monotonic()))
