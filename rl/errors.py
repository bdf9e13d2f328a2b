"""The errors train.py tells apart: a `UserError` is one line and exit 2 before anything is
written, a `WorkerError` one line and exit 1; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable


class UserError(Exception):
    """A mistake in the user's input; the message names the problem and the fix."""


def user_error_exit(prog: str, error: UserError) -> int:
    """Every command's answer to a `UserError`: one line `prog: error: ...` on stderr, status 2."""
    print(f"{prog}: error: {error}", file=sys.stderr)
    return 2


def did_you_mean(name: str, choices: Iterable[str], n: int = 3) -> str:
    """' (did you mean X?)' for close matches of `name` in `choices`, or ''."""
    close = difflib.get_close_matches(name, list(choices), n=n, cutoff=0.6)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


# Exit statuses of train.py besides 0 and 2 (`UserError`), chosen so that a cluster can tell
# what to do (the Job's podFailurePolicy in rl/systems/manifests.py reads them):
PREEMPTED_EXIT = 75  # EX_TEMPFAIL (sysexits.h): stopped by SIGTERM; run it again to continue
DIVERGED_EXIT = 3  # a non-finite loss or parameter: running it again would diverge again
# EX_UNAVAILABLE (sysexits.h): no node of the Ray cluster could hold an actor for
# --actor_wait_timeout seconds; checkpointed. Not 75: a Job restarts 75 for free and forever,
# and a restart brings no actor node back, so this one counts as a failure (`backoffLimit`).
ACTORS_UNAVAILABLE_EXIT = 69


class Preempted(Exception):
    """SIGTERM was received: every run's checkpoint is written; the same command continues."""


class ActorsUnavailable(Exception):
    """No node of the Ray cluster could hold an actor for --actor_wait_timeout seconds (every
    actor node lost, e.g. a preempted node pool); the loop checkpoints every run, then exits."""


class Diverged(Exception):
    """A run's loss or parameters became non-finite; its last good checkpoint is its latest."""

    def __init__(self, message: str, run_dirs: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.run_dirs = tuple(run_dirs)


# A worker failure may reach train.py wrapped: an env worker's error surfaces inside the
# driver's compiled collect loop, which TF re-raises as a `tf.errors.OpError` whose message
# quotes the Python exception, so `worker_error_line` also finds it there (after this marker).
WORKER_ERROR_MARKER = "WorkerError: "


class WorkerError(RuntimeError):
    """A worker process raised or died; one line naming it (the traceback goes to a file)."""


def worker_error_line(error: BaseException) -> str | None:
    """The one-line message of a WorkerError, also when TF wrapped it; None for other errors."""
    if isinstance(error, WorkerError):
        return str(error).splitlines()[0] if str(error) else "a worker failed"
    for line in str(error).splitlines():
        _, found, message = line.partition(WORKER_ERROR_MARKER)
        if found and message.strip():
            return message.strip()
    return None
