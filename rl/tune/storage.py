"""Where a study lives: an Optuna storage URL (`sqlite:///`, the default; `postgresql://`,
`mysql://`, or `grpc://` for Optuna's storage proxy), checked before anything is written.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

from rl.errors import UserError

RDB_DIALECTS = ("sqlite", "postgresql", "mysql")
# Seconds between a running trial's heartbeats, and how old the last one may be before another
# worker marks the trial failed (and re-runs it): a worker that died without a word.
HEARTBEAT_SECONDS = 10
GRACE_SECONDS = 60
# Re-runs of one trial whose workers died before it is left failed.
MAX_RETRIES = 3
# Tries at opening a new database while other workers create its tables.
CREATE_ATTEMPTS = 5
# What a worker sees when another one created the same tables a moment before it.
RACE_SIGNS = ("already exists", "database is locked", "UNIQUE constraint", "duplicate key")


@dataclass(frozen=True)
class StorageURL:
    url: str
    kind: str  # "rdb" or "grpc"
    host: str = ""
    port: int = 0


def without_password(url: str) -> str:
    """The URL as it may be printed: `postgresql://optuna:***@host/db`."""
    return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)


def default_url(output_dir: str) -> str:
    return f"sqlite:///{os.path.abspath(os.path.join(output_dir, 'study.db'))}"


def parse_storage(url: str, created_here: bool = False) -> StorageURL:
    """The checked URL (`created_here`: the default file, whose directory the tuner makes);
    UserError (one line, the accepted forms) for anything else."""
    if url.startswith("grpc://"):
        host, sep, port = url[len("grpc://") :].rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise UserError(f"--storage {url!r}: a gRPC storage proxy is grpc://HOST:PORT")
        return StorageURL(url, "grpc", host, int(port))
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
        dialect = parsed.get_backend_name()
    except ArgumentError:
        dialect = ""
    if dialect not in RDB_DIALECTS:
        raise UserError(
            f"--storage {without_password(url)!r} is not a storage URL; use sqlite:///PATH.db, "
            "postgresql://USER:PASSWORD@HOST/DB, mysql://... or grpc://HOST:PORT"
        )
    if dialect == "sqlite":
        path = parsed.database or ""
        if not path or path == ":memory:":
            raise UserError(
                f"--storage {url!r}: an SQLite study needs a file (sqlite:///PATH.db) so that "
                "other workers and a resumed tuner see it"
            )
        parent = os.path.dirname(os.path.abspath(path))
        if not created_here and not os.path.isdir(parent):
            raise UserError(f"--storage {url!r}: the directory {parent} does not exist")
    return StorageURL(url, "rdb")


def retry_stale_trial(study, trial) -> None:
    """Queues a re-run (a WAITING trial with the same params) of a trial whose worker died."""
    import optuna

    optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRIES)(study, trial)


@contextlib.contextmanager
def _creation_lock(sqlite_url: str) -> Iterator[None]:
    """Holds `<database>.lock` (flock) while an SQLite database is opened (and maybe created)."""
    from sqlalchemy.engine import make_url

    path = os.path.abspath(make_url(sqlite_url).database) + ".lock"
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def open_storage(storage: StorageURL):
    """The Optuna storage; a running trial sends heartbeats, so a dead worker's trial is found."""
    import optuna

    if storage.kind == "grpc":
        return optuna.storages.GrpcStorageProxy(host=storage.host, port=storage.port)
    # SQLite: wait up to 60 s for another worker's write instead of failing after 5.
    sqlite = storage.url.startswith("sqlite")
    engine_kwargs = {"connect_args": {"timeout": 60}} if sqlite else None
    # Workers started together race to create the tables of a new database; the loser sees
    # "table ... already exists" (or a locked SQLite file) and finds the tables made next time.
    # On SQLite the workers of one machine take turns (a lock file next to the database).
    for attempt in range(CREATE_ATTEMPTS):
        try:
            with _creation_lock(storage.url) if sqlite else contextlib.nullcontext():
                return optuna.storages.RDBStorage(
                    storage.url,
                    engine_kwargs=engine_kwargs,
                    heartbeat_interval=HEARTBEAT_SECONDS,
                    grace_period=GRACE_SECONDS,
                    heartbeat_stale_trial_callback=retry_stale_trial,
                )
        except Exception as error:  # a database that refuses the connection: one line
            text = str(error)
            if any(sign in text for sign in RACE_SIGNS) and attempt + 1 < CREATE_ATTEMPTS:
                time.sleep(0.5 * (attempt + 1))
                continue
            first_line = text.strip().splitlines()[0] if text.strip() else type(error).__name__
            shown = without_password(storage.url)
            raise UserError(f"--storage {shown!r}: cannot open it ({first_line})") from None
