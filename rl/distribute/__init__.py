"""The learner under `tf.distribute` strategies: the replicated gradient step and worker roles
(docs/distributed.md)."""

from rl.distribute.replicated import (
    all_workers_agree,
    check_batch_splits,
    num_local_replicas,
    replica_xla,
    replicated_loss,
    replicated_minimize,
    sum_across_replicas,
)
from rl.distribute.worker import WorkerRole, worker_role

__all__ = [
    "WorkerRole",
    "all_workers_agree",
    "check_batch_splits",
    "num_local_replicas",
    "replicated_loss",
    "replica_xla",
    "replicated_minimize",
    "sum_across_replicas",
    "worker_role",
]
