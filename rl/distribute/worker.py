"""This process's place in a multi-worker run: which worker it is and where it may write.

Only the chief (worker 0) writes the run directory. The others do everything the chief does,
since saving can involve collectives every worker must enter, but into a scratch directory
removed at the end (TF's multi-worker checkpointing guidance), so nothing is written twice.
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
    """A multi-host TPU slice runs one process per TPU VM; GKE gives each Pod TPU_WORKER_ID and
    the comma-separated TPU_WORKER_HOSTNAMES (rl/systems/manifests.py). Host 0 is the chief."""
    hosts = [h for h in environ.get("TPU_WORKER_HOSTNAMES", "").split(",") if h.strip()]
    if len(hosts) <= 1:
        return WorkerRole()
    return WorkerRole(index=int(environ.get("TPU_WORKER_ID", "0")), count=len(hosts))


def worker_role(
    strategy: tf.distribute.Strategy, environ: Mapping[str, str] | None = None
) -> WorkerRole:
    """The role of this process under `strategy` (from TF_CONFIG, or the TPU host variables of a
    multi-host slice, untested on a real one); any other strategy is one process, its own chief."""
    if isinstance(strategy, tf.distribute.TPUStrategy):
        return tpu_host_role(os.environ if environ is None else environ)
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return WorkerRole()
    resolver = strategy.cluster_resolver
    cluster = resolver.cluster_spec()
    jobs = set(cluster.jobs)
    has_chief = "chief" in jobs
    count = sum(cluster.num_tasks(job) for job in ("chief", "worker") if job in jobs)
    if count <= 1:
        return WorkerRole()
    # The cluster's order (TF's id_in_cluster): the chief first, then the workers.
    if resolver.task_type == "chief":
        index = 0
    else:
        index = int(resolver.task_id) + (1 if has_chief else 0)
    return WorkerRole(index=index, count=count)
