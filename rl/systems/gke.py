"""`--sys gke`: train with MultiWorkerMirroredStrategy on CPU or GPU nodes of a GKE cluster: one
worker is a headless Service and an Indexed Job, several a JobSet (restarted together after any
one fails), Ray actors (`--num_workers N > 1`) a KubeRay RayJob. Each Pod runs train.py with
`--sys local` (`rl.distribute.tf_config` builds its TF_CONFIG).
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from rl.errors import UserError, did_you_mean
from rl.registry import register_system
from rl.systems.kube_launcher import JobShape, KubernetesSystem, check_image
from rl.systems.manifests import (
    ACTOR_RESOURCE,
    MAX_JOB_NAME,
    MAX_RAYJOB_NAME,
    WORKER_STRATEGY,
    jobset_max_name,
    rayjob_manifest,
    worker_job_manifests,
)

MAX_WORKERS = 100_000  # an Indexed Job's most completions (batch/v1 JobSpec.completions)
# The most GPUs one GKE node has (a2-megagpu-16g: 16 x A100 40GB); a Pod cannot span nodes.
MAX_GPUS_PER_WORKER = 16
# --actor_node_cpus when not given: min(N, this), a node size GKE's CPU machine types all offer.
DEFAULT_ACTOR_NODE_CPUS = 8
# Values of the `cloud.google.com/gke-accelerator` node label (GKE's GPU platforms page, 2026):
# a Pod that selects a type no node pool has stays Pending, so a typo is caught here instead.
GPU_TYPES = tuple(
    "nvidia-tesla-t4 nvidia-tesla-p4 nvidia-tesla-p100 nvidia-tesla-v100 nvidia-l4 "
    "nvidia-tesla-a100 nvidia-a100-80gb nvidia-h100-80gb nvidia-h100-mega-80gb "
    "nvidia-h200-141gb nvidia-b200 nvidia-gb200 nvidia-rtx-pro-6000".split()
)


def check_gpus(gpus_per_worker: int, gpu_type: str | None) -> None:
    """`--gpus_per_worker` in 0..16 and `--gpu_type` a GKE accelerator name that needs GPUs."""
    if not 0 <= gpus_per_worker <= MAX_GPUS_PER_WORKER:
        raise UserError(
            f"--gpus_per_worker must be 0 (CPU workers) to {MAX_GPUS_PER_WORKER} (the most GPUs "
            f"a GKE node has), got {gpus_per_worker}"
        )
    if gpu_type is None:
        return
    if gpus_per_worker == 0:
        raise UserError(f"--gpu_type {gpu_type} needs --gpus_per_worker >= 1 (0 means CPU workers)")
    if gpu_type not in GPU_TYPES:
        raise UserError(
            f"--gpu_type {gpu_type!r} is not a GKE GPU type{did_you_mean(gpu_type, GPU_TYPES)}; "
            f"valid: {', '.join(GPU_TYPES)}"
        )


def check_actor_agent(args: argparse.Namespace, hparams: Any, compiled: bool) -> None:
    """Only training replay agents (Ape-X) and IMPALA have Ray actors."""
    from rl.cli import worker_flags
    from rl.workers.checks import check_num_workers, uses_apex, uses_asynchronous_actors

    if not args.training or not (uses_apex(hparams) or uses_asynchronous_actors(hparams)):
        what = "--training False" if not args.training else f"agent {hparams.agent}"
        raise UserError(
            f"--sys gke --num_workers {args.num_workers} renders Ray actors, which only replay "
            f"agents and IMPALA train with, not {what}; use --num_workers 1"
        )
    check_num_workers(worker_flags(args), hparams, compiled, "default")


def actor_shape(args: argparse.Namespace, gpus: int, device: str) -> JobShape:
    """The RayJob of a learner with `--num_workers` Ray actors on `--actor_nodes` CPU Pods."""
    actors = args.num_workers
    if args.workers not in (None, 1):
        raise UserError(
            f"--workers {args.workers} with --num_workers {actors}: the learner of Ray actors is "
            "one Pod (the RayJob's head); use --workers 1 and GPUs with --gpus_per_worker"
        )
    cpus = args.actor_node_cpus
    if cpus is None:
        cpus = min(actors, DEFAULT_ACTOR_NODE_CPUS)
    nodes = math.ceil(actors / max(cpus, 1)) if args.actor_nodes is None else args.actor_nodes
    if cpus < 1 or nodes < 1:
        raise UserError(f"--actor_nodes and --actor_node_cpus must be >= 1, got {nodes} and {cpus}")
    if nodes * cpus < actors:
        raise UserError(
            f"--num_workers {actors} actors need one CPU each, and --actor_nodes {nodes} x "
            f"--actor_node_cpus {cpus} give {nodes * cpus}; raise either one"
        )
    return JobShape(
        render=lambda spec: [
            rayjob_manifest(
                spec, actor_nodes=nodes, actor_node_cpus=cpus, gpus=gpus, gpu_type=args.gpu_type
            )
        ],
        pods=1 + nodes,
        summary=f"a learner ({device}), {actors} Ray actors on {nodes} x {cpus} CPUs",
        strategy="default",  # one learner process: train.py refuses actors with a strategy
        max_name=MAX_RAYJOB_NAME,
        letter_first=True,
        check_actors=check_actor_agent,
        train_args=(f"--actor_resources={json.dumps({ACTOR_RESOURCE: 1})}",),
    )


class GkeSystem(KubernetesSystem):
    """N synchronous workers as one Indexed Job or JobSet, or a learner with Ray actors."""

    name = "gke"

    def shape(self, args: argparse.Namespace) -> JobShape:
        workers = 1 if args.workers is None else args.workers
        if args.num_workers <= 1 and not {args.actor_nodes, args.actor_node_cpus} <= {None}:
            raise UserError(
                "--actor_nodes and --actor_node_cpus size the nodes of Ray actors: they need "
                "--num_workers N > 1 (a replay agent's or IMPALA's actors)"
            )
        if not 1 <= workers <= MAX_WORKERS:
            raise UserError(
                f"--workers must be between 1 and {MAX_WORKERS} (an Indexed Job's limit), "
                f"got {workers}"
            )
        gpus = args.gpus_per_worker or 0
        check_gpus(gpus, args.gpu_type)
        check_image(args.image, "gke", "k8s/Dockerfile.gpu" if gpus else "k8s/Dockerfile.cpu")
        device = f"{gpus} x {args.gpu_type or 'GPU'} each" if gpus else "CPU only"
        if args.num_workers > 1:
            return actor_shape(args, gpus, device.removesuffix(" each"))
        return JobShape(
            # MultiWorkerMirroredStrategy cannot continue without one of its workers: a JobSet
            # restarts them all.
            render=lambda spec: worker_job_manifests(
                spec, workers, gpus_per_worker=gpus, gpu_type=args.gpu_type
            ),
            pods=workers,
            summary=f"{workers} worker{'s' if workers > 1 else ''} ({device})",
            strategy=WORKER_STRATEGY,
            max_name=MAX_JOB_NAME if workers == 1 else jobset_max_name(workers),
            letter_first=workers > 1,
        )


register_system("gke", GkeSystem())
