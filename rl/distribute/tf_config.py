"""TF_CONFIG for MultiWorkerMirroredStrategy, built in-process (no shell wrapper; testable with a
fake environment) from what `rl.systems.manifests.worker_job_manifests` sets: JOB_COMPLETION_INDEX,
RL_NUM_WORKERS, RL_JOB_NAME (Pod hostnames are `<RL_JOB_NAME>-<index>`), RL_SERVICE (the headless
Service) and RL_WORKER_PORT.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from rl.errors import UserError

DEFAULT_PORT = 2222


def _int(environ: Mapping[str, str], key: str, default: int | None = None) -> int:
    text = environ.get(key)
    if text is None:
        if default is None:
            raise UserError(f"TF_CONFIG: ${key} is not set (expected from the Indexed Job)")
        return default
    try:
        return int(text)
    except ValueError:
        raise UserError(f"TF_CONFIG: ${key} must be an integer, got {text!r}") from None


def tf_config_from_env(environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """This Pod's TF_CONFIG (a hand-written one wins), or None outside an Indexed Job."""
    environ = os.environ if environ is None else environ
    if environ.get("TF_CONFIG"):
        try:
            return json.loads(environ["TF_CONFIG"])
        except json.JSONDecodeError as error:
            raise UserError(f"TF_CONFIG is not valid JSON: {error}") from None
    if "JOB_COMPLETION_INDEX" not in environ:
        return None
    index = _int(environ, "JOB_COMPLETION_INDEX")
    num_workers = _int(environ, "RL_NUM_WORKERS")
    port = _int(environ, "RL_WORKER_PORT", DEFAULT_PORT)
    job = environ.get("RL_JOB_NAME")
    if not job:
        raise UserError("TF_CONFIG: $RL_JOB_NAME is not set (expected from the Indexed Job)")
    service = environ.get("RL_SERVICE") or job
    if not 0 <= index < num_workers:
        raise UserError(
            f"TF_CONFIG: JOB_COMPLETION_INDEX={index} is outside 0..{num_workers - 1} "
            f"(RL_NUM_WORKERS={num_workers})"
        )
    workers = [f"{job}-{i}.{service}:{port}" for i in range(num_workers)]
    return {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}


def install_tf_config(environ: dict[str, str] | None = None) -> dict[str, Any] | None:
    """Sets `TF_CONFIG` in `environ` unless it is set; returns `tf_config_from_env`."""
    environ = os.environ if environ is None else environ  # type: ignore[assignment]
    config = tf_config_from_env(environ)
    if config is not None and not environ.get("TF_CONFIG"):
        environ["TF_CONFIG"] = json.dumps(config, sort_keys=True)
    return config
