"""This process's place in a multi-worker run. Only the chief (worker 0) writes the run dir; the
others do everything it does (saving can involve collectives every worker must enter), but into
a scratch dir removed at the end (TF's multi-worker checkpointing guidance).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

import tensorflow as tf


@dataclass(frozen=True)
class WorkerRole:
    """`index` of this worker among `count` (0 is the chief; 1 of 1 without a cluster)."""

    index: int = 0
    count: int = 1

    @property
    def is_chief(self) -> bool:
        return self.index == 0

    @property
    def multi_worker(self) -> bool:
        return self.count > 1

    def scratch_dir(self) -> str:
        """A fresh local directory for a non-chief worker's writes (the caller removes it)."""
        return tempfile.mkdtemp(prefix=f"rl_worker{self.index}_")


def tpu_host_role(environ: Mapping[str, str]) -> WorkerRole:
    """One process per TPU VM, from TPU_WORKER_ID and TPU_WORKER_HOSTNAMES (set by GKE)."""
    hosts = [h for h in environ.get("TPU_WORKER_HOSTNAMES", "").split(",") if h.strip()]
    if len(hosts) <= 1:
        return WorkerRole()
    return WorkerRole(index=int(environ.get("TPU_WORKER_ID", "0")), count=len(hosts))


def worker_role(
    strategy: tf.distribute.Strategy, environ: Mapping[str, str] | None = None
) -> WorkerRole:
    """This process's role under `strategy` (TF_CONFIG, or a multi-host TPU slice's: untested)."""
    if isinstance(strategy, tf.distribute.TPUStrategy):
        return tpu_host_role(os.environ if environ is None else environ)
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return WorkerRole()
    resolver = strategy.cluster_resolver
    cluster = resolver.cluster_spec()
    jobs = set(cluster.jobs)
    count = sum(cluster.num_tasks(job) for job in ("chief", "worker") if job in jobs)
    if count <= 1:
        return WorkerRole()
    # The cluster's order (TF's id_in_cluster): the chief first, then the workers.
    chief = resolver.task_type == "chief"
    index = 0 if chief else int(resolver.task_id) + int("chief" in jobs)
    return WorkerRole(index=index, count=count)
