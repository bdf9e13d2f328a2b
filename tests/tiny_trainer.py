"""One process that runs `train.main(args)` for each request the test session sends it.

The session's shared trained runs (tests/conftest.py, `TrainedRuns`) are trained here, one after
another, on the core the tests leave free: one TensorFlow import for all of them instead of one
per run (4-8 s each), while each run still writes to real file descriptors, as `python train.py`
does. A request is one JSON line on stdin: {"args": [...], "stdout": path, "stderr": path};
file descriptors 1 and 2 point at those two files and `sys.argv` is `["train.py", *args]` while
`train.main(args)` runs (C++ logs, Python warnings and TF's log records included), and the exit
status comes back as one line on the pipe the process started with as stdout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))


def _run_with_output_to(args: list[str], stdout: str, stderr: str) -> int:
    import train
    from rl.utils.private_apis import forget_retracing_history

    # TF warns when 5 of a function's last calls traced it, counting per Python function over
    # the whole process: the runs before this one (other agents of the same class) would count
    # toward a warning that a fresh `python train.py` never prints.
    forget_retracing_history()
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(stdout, "w") as out, open(stderr, "w") as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.argv = ["train.py", *args]  # as `python train.py *args` has it (the manifest reads it)
        try:
            return train.main(args)
        except BaseException as error:  # what a process would print as it dies
            import traceback

            traceback.print_exception(error)
            return 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def main() -> None:
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    for line in sys.stdin:
        request = json.loads(line)
        status = _run_with_output_to(request["args"], request["stdout"], request["stderr"])
        replies.write(f"{status}\n")


if __name__ == "__main__":
    main()
