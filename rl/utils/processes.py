"""Process plumbing: whether a process still runs, and how child processes (env worker
processes, a Ray runtime started by the run) live and die.

`pid_alive` is how a restarted tuner or a new process tells a dead one's leftovers (its RUNNING
trials, its private compile-cache directory) from a live one's.

Lifecycle rules of child processes (docs/workers.md):
- Only the main process handles Ctrl-C and SIGTERM. Children start with both ignored (a
  terminal sends SIGINT to the whole foreground process group, `kill -TERM -<pgid>` or a
  container runtime may send SIGTERM to all), so a Ctrl-C becomes one KeyboardInterrupt in the
  main process, and a SIGTERM one checkpoint (rl/preemption.py); the main process then stops
  every child itself.
- Children die with their parent: on Linux the kernel sends them SIGKILL when the parent dies
  (prctl PR_SET_PDEATHSIG, set in rl/envs/grouped_env.py, which cannot import this module
  early; Ray does the same for its processes).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

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


def pid_alive(pid: int) -> bool:
    """True while process `pid` exists (also when it belongs to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
