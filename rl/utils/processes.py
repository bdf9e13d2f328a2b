"""Process plumbing: whether a process still runs, and how child processes live and die.

Only the main process handles Ctrl-C and SIGTERM: children start with both ignored (a terminal
signals the whole process group), so a Ctrl-C is one KeyboardInterrupt and a SIGTERM one
checkpoint in the main process, which then stops every child itself. Children die with their
parent through PR_SET_PDEATHSIG (rl/envs/grouped_env.py). docs/workers.md has the rules.
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
    """Processes started inside this block ignore SIGINT and SIGTERM: an ignored disposition
    survives exec (a handler would not), and Python keeps an inherited SIG_IGN for SIGINT. A no-op
    outside the main thread."""
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
