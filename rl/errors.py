"""User-facing errors.

A `UserError` is a mistake the person running `train.py` can fix (a bad name, a bad override, a
bad path). `train.py` turns it into one line on stderr and exit status 2, before anything is
written. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(Exception):
    """A mistake in the user's input; the message names the problem and the fix."""


def did_you_mean(name: str, choices: Iterable[str], n: int = 3) -> str:
    """Returns ' (did you mean X?)' for close matches of `name` in `choices`, or ''."""
    close = difflib.get_close_matches(name, list(choices), n=n, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


# Exit statuses of train.py besides 0 and 2 (`UserError`), chosen so that a cluster can tell
# what to do (the Job's podFailurePolicy in rl/systems/manifests.py reads them):
PREEMPTED_EXIT = 75  # EX_TEMPFAIL (sysexits.h): stopped by SIGTERM; run it again to continue
DIVERGED_EXIT = 3  # a non-finite loss or parameter: running it again would diverge again


class Preempted(Exception):
    """SIGTERM was received: every run's checkpoint is written; the same command continues."""


class Diverged(Exception):
    """A run's loss or parameters became non-finite (`halt_on_nonfinite`); its last good
    checkpoint is its latest. `run_dirs`: the runs that diverged (when the loop knows them)."""

    def __init__(self, message: str, run_dirs: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.run_dirs = tuple(run_dirs)
