"""Whether a process of this host still runs: how a restarted tuner or a new process tells a
dead one's leftovers (its RUNNING trials, its private compile-cache directory) from a live
one's."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True while process `pid` exists (also when it belongs to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
