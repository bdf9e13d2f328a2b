"""SIGTERM = checkpoint and go: a request the loop reads between iterations (every run
checkpoints, train.py exits 75), and a watchdog that exits with the same status `grace` seconds
after the signal whatever the process is doing (docs/run_directory.md, "Preemption and restarts").
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

from rl.errors import PREEMPTED_EXIT

DEFAULT_GRACE_SECONDS = 25.0  # GKE and TPU VMs give 30 s; 5 s spare for the exit itself


class Abandoned(Exception):
    """Raised out of work marked `interruptible` when SIGTERM arrives during it."""


class PreemptionNotice:
    """SIGTERM, as a flag the training loop polls."""

    def __init__(self, grace_seconds: float = DEFAULT_GRACE_SECONDS) -> None:
        self.grace_seconds = float(grace_seconds)
        self.received_at: float | None = None  # time.monotonic() of the first SIGTERM
        self._interruptible = False
        self._installed = False
        self._watchdog: threading.Timer | None = None

    @property
    def requested(self) -> bool:
        return self.received_at is not None

    def seconds_since(self) -> float:
        assert self.received_at is not None
        return time.monotonic() - self.received_at

    @contextlib.contextmanager
    def installed(self, received_at: float | None = None) -> Iterator[PreemptionNotice]:
        """SIGTERM sets the flag while inside (main thread only); `received_at`: an earlier one."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = signal.signal(signal.SIGTERM, self._on_signal)
        self._installed = True
        if received_at is not None and self.received_at is None:
            self._start(received_at)
        try:
            yield self
        finally:
            self._installed = False
            signal.signal(signal.SIGTERM, previous)
            if self._watchdog is not None:
                self._watchdog.cancel()

    def reclaim(self) -> None:
        """Installs our SIGTERM handler again after a strategy is built: TF's coordination service
        installs a C++ one that would swallow the signal."""
        if self._installed and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._on_signal)

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """Work whose partial result may be dropped: a SIGTERM during it raises `Abandoned`."""
        if self.requested:
            raise Abandoned
        self._interruptible = True
        try:
            yield
        finally:
            self._interruptible = False

    def _start(self, received_at: float) -> None:
        self.received_at = received_at
        left = self.grace_seconds - (time.monotonic() - received_at)
        self._watchdog = threading.Timer(max(left, 0.0), self._out_of_time)
        self._watchdog.daemon = True
        self._watchdog.start()

    def _on_signal(self, signum: int, frame: object) -> None:
        if self.received_at is None:
            self._start(time.monotonic())
        if self._interruptible:
            self._interruptible = False
            raise Abandoned

    def _out_of_time(self) -> None:
        sys.stderr.write(
            f"train.py: SIGTERM: no checkpoint within --preemption_grace={self.grace_seconds:g} "
            "s; exiting (status 75): the run resumes from its previous checkpoint\n"
        )
        sys.stderr.flush()
        os._exit(PREEMPTED_EXIT)  # no cleanup: the grace is up, SIGKILL comes next anyway
