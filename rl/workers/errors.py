"""The error a failed worker process becomes in the main process, and its one-line form.

train.py prints a worker failure as ONE stderr line naming the worker and its error (the full
traceback goes to a file in the run dir), and exits with status 1. The failure may reach train.py
wrapped: an env worker's error surfaces inside the driver's compiled collect loop, which TF
re-raises as a `tf.errors.OpError` whose message quotes the Python exception, so
`worker_error_line` also finds it there.
"""

from __future__ import annotations

MARKER = "WorkerError: "


class WorkerError(RuntimeError):
    """A worker process raised or died; the message is one line naming the worker."""


def worker_error_line(error: BaseException) -> str | None:
    """The one-line message of a WorkerError, also when TF wrapped it; None for other errors."""
    if isinstance(error, WorkerError):
        return str(error).splitlines()[0] if str(error) else "a worker failed"
    for line in str(error).splitlines():
        _, found, message = line.partition(MARKER)
        if found and message.strip():
            return message.strip()
    return None
