"""What train.py's flags say about worker processes and Ray actors, as the engine layer reads them
(`rl.workers.checks.check_num_workers`): plain values, no argparse, no Ray; `rl.cli.worker_flags`
reads them from a command line.
"""

from __future__ import annotations

from dataclasses import dataclass

from rl.workers.waiting import DEFAULT_ACTOR_WAIT_SECONDS


@dataclass(frozen=True)
class WorkerFlags:
    """--num_workers and the flags that place and watch its Ray actors."""

    num_workers: int = 1
    training: bool = True  # test mode plays its episodes in this process: no actors
    record_video: bool = False
    ray_address: str | None = None  # as given (RAY_ADDRESS is read where it matters)
    actor_resources: dict[str, float] | None = None
    max_actor_restarts: int = 3
    actor_wait_timeout: float = DEFAULT_ACTOR_WAIT_SECONDS
