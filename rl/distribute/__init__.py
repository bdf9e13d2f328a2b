"""The learner under `tf.distribute` strategies: the replicated gradient step and worker roles.

Strategies are made by name in `rl.distribute.strategies` (multi-worker ones read TF_CONFIG,
`rl.distribute.tf_config`); docs/distributed.md explains the whole path (what runs where, loss
scaling, reductions, multi-worker runs).
"""

from rl.distribute.replicated import (
    all_workers_agree,
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
    "num_local_replicas",
    "replicated_loss",
    "replica_xla",
    "replicated_minimize",
    "sum_across_replicas",
    "worker_role",
]
