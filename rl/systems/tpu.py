"""`--sys tpu`: train on a Cloud TPU slice as a Kubernetes Job on GKE. Checks the slice type,
and that a slice spanning several TPU VMs is asked for explicitly; `rl.systems.kube_launcher`
does the rest."""

from __future__ import annotations

import argparse

from rl.errors import UserError
from rl.registry import register_system
from rl.systems.kube_launcher import JobShape, KubernetesSystem, check_image
from rl.systems.manifests import MAX_JOB_NAME, TPU_STRATEGY, jobset_max_name, tpu_job_manifests
from rl.systems.tpu_types import TPU_TYPES, parse_tpu, tpu_type_names


def _largest_single_host(generation: str) -> str:
    sizes = [t.name for t in TPU_TYPES.values() if t.generation == generation and not t.multi_host]
    return sizes[-1]


class TpuSystem(KubernetesSystem):
    """One Job per TPU slice."""

    name = "tpu"

    def shape(self, args: argparse.Namespace) -> JobShape:
        if not args.tpu:
            raise UserError(
                "--sys tpu needs --tpu TYPE (e.g. --tpu v5e-4; valid: "
                f"{', '.join(tpu_type_names())}); to train on this machine use --sys local"
            )
        tpu = parse_tpu(args.tpu)
        if tpu.multi_host and not args.experimental_multihost:
            raise UserError(
                f"--tpu {tpu.name} spans {tpu.hosts} hosts ({tpu.topology}); multi-host TF on "
                "GKE is untested, so it needs --experimental_multihost (or use a one-host type "
                f"such as {_largest_single_host(tpu.generation)})"
            )
        check_image(args.image, "tpu", "k8s/Dockerfile.tpu")
        hosts = f"{tpu.hosts} host{'s' if tpu.hosts > 1 else ''}"
        return JobShape(
            render=lambda spec: tpu_job_manifests(spec, tpu),
            pods=tpu.hosts,
            summary=f"{tpu.name} ({tpu.topology}, {hosts}, {tpu.chips_per_host} chips each)",
            strategy=TPU_STRATEGY,
            # A multi-host slice is a JobSet (restarted as a group): shorter names.
            max_name=jobset_max_name(tpu.hosts) if tpu.multi_host else MAX_JOB_NAME,
            letter_first=tpu.multi_host,
        )


register_system("tpu", TpuSystem())
