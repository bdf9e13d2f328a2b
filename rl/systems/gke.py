"""`--sys gke`: train with MultiWorkerMirroredStrategy on CPU or GPU nodes of a GKE cluster.

    python train.py --sys gke --workers 2 --gpus_per_worker 1 --gpu_type nvidia-l4 \\
        --image IMAGE --hparams ppo_cartpole --output_dir gs://BUCKET/runs/ppo [--dry_run]

Submits, for one worker, a headless Service and an Indexed Job; for several, a JobSet around the
same Indexed Job, which restarts all workers together after any one fails and makes the
Service itself (`rl.systems.manifests.worker_job_manifests`). The Service gives Pod i a stable
DNS name `<job>-<i>.<service>`; each Pod runs this same train.py with `--sys local` and
RL_STRATEGY=multi_worker_mirrored, and `rl.distribute.tf_config` builds TF_CONFIG from the Job
controller's JOB_COMPLETION_INDEX inside the process, so there is no shell wrapper or init
container. `--gpus_per_worker 0` (the default) means CPU workers and the CPU image.

This module checks what is specific to workers (count, GPUs, GPU type); everything else is
`rl.systems.kube_launcher`, shared with `--sys tpu`.
"""

from __future__ import annotations

import argparse

from rl.errors import UserError, did_you_mean
from rl.registry import register_system
from rl.systems.kube_launcher import JobShape, KubernetesSystem, check_image
from rl.systems.manifests import (
    MAX_JOB_NAME,
    WORKER_STRATEGY,
    jobset_max_name,
    worker_job_manifests,
)

# An Indexed Job may have at most 100000 completions (batch/v1 JobSpec.completions).
MAX_WORKERS = 100_000
# The most GPUs one GKE node has (a2-megagpu-16g: 16 x A100 40GB); a Pod cannot span nodes.
MAX_GPUS_PER_WORKER = 16
# Values of the `cloud.google.com/gke-accelerator` node label (GKE's GPU platforms page, as of
# 2026; checked on paper only). A Pod that selects a type no node pool has stays Pending, so a
# typo is caught here instead.
GPU_TYPES = (
    "nvidia-tesla-t4",
    "nvidia-tesla-p4",
    "nvidia-tesla-p100",
    "nvidia-tesla-v100",
    "nvidia-l4",
    "nvidia-tesla-a100",
    "nvidia-a100-80gb",
    "nvidia-h100-80gb",
    "nvidia-h100-mega-80gb",
    "nvidia-h200-141gb",
    "nvidia-b200",
    "nvidia-gb200",
    "nvidia-rtx-pro-6000",
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


class GkeSystem(KubernetesSystem):
    """The `gke` entry of the systems registry: N synchronous workers as one Indexed Job."""

    name = "gke"

    def shape(self, args: argparse.Namespace) -> JobShape:
        """Checks --workers, --gpus_per_worker, --gpu_type and --image."""
        workers = 1 if args.workers is None else args.workers
        if not 1 <= workers <= MAX_WORKERS:
            raise UserError(
                f"--workers must be between 1 and {MAX_WORKERS} (an Indexed Job's limit), "
                f"got {workers}"
            )
        gpus = args.gpus_per_worker or 0
        check_gpus(gpus, args.gpu_type)
        check_image(args.image, "gke", "k8s/Dockerfile.gpu" if gpus else "k8s/Dockerfile.cpu")
        device = f"{gpus} x {args.gpu_type or 'GPU'} each" if gpus else "CPU only"
        return JobShape(
            # One worker: a failed Pod is replaced and resumes from the checkpoint. Several:
            # MultiWorkerMirroredStrategy cannot continue without one of them, so the JobSet
            # restarts them all and they resume from the chief's checkpoint.
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
