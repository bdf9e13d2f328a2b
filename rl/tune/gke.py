"""`python -m rl.tune ... --sys gke --workers N --storage URL`: N worker Pods of one study.

The Pods share only the study's storage (PostgreSQL, MySQL or Optuna's gRPC proxy; not SQLite,
whose file Pods cannot share), submitted as train.py's `--sys gke` submits. Afterwards the same
command with `--sys local` re-runs the best trials on fresh seeds and writes the winner.
"""

from __future__ import annotations

import argparse
from typing import Any

from rl.errors import UserError
from rl.systems import kube_launcher
from rl.systems.kube_launcher import Launch, check_image, check_namespace, job_name, send
from rl.systems.manifests import JobSpec, check_dns_label, tuner_job_manifests

# Flags a Pod gets its own way (it runs `--sys local --select False`) or not at all, besides
# train.py's launch flags, which `pod_train_args` leaves out.
POD_SET_FLAGS = ("--sys", "--select", "--publish", "--storage_secret")


def pod_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[str]:
    """The Pod's flags: every tuner flag the user set, then `--sys=local --select=False`."""
    forwarded = kube_launcher.pod_train_args(args, parser)
    kept = [arg for arg in forwarded if arg.split("=")[0] not in POD_SET_FLAGS]
    return [*kept, "--sys=local", "--select=False"]


def plan_workers(
    args: argparse.Namespace, plan: dict[str, Any], parser: argparse.ArgumentParser
) -> Launch:
    """Checks the launch flags, renders the Job (the Pods get `parser`'s flags); sends nothing."""
    if args.storage is None or plan["storage"].url.startswith("sqlite"):
        raise UserError(
            "--sys gke workers share one study through a database server: give --storage "
            "postgresql://USER:PASSWORD@HOST/DB or grpc://HOST:PORT (docs/tuning.md)"
        )
    if not args.output_dir.startswith("gs://"):
        raise UserError(
            f"--sys gke needs a gs:// --output_dir (got {args.output_dir!r}): a Pod's disk "
            "disappears with the Pod, and the trial run dirs are the study's TensorBoard"
        )
    check_image(args.image, "gke", "k8s/Dockerfile.cpu")
    namespace = check_namespace(args)
    name = job_name(args, f"tune-{args.hparams}")
    spec = JobSpec(
        name=name,
        namespace=namespace,
        image=args.image,
        train_args=pod_args(args, parser),
        hparams_set=args.hparams,
    )
    # A replaced Pod is a fresh worker of the same study: allow each worker a replacement.
    secret = args.storage_secret
    if secret is not None:
        check_dns_label(secret, "--storage_secret", 253)
    if (secret is None) == ("$(OPTUNA_DB_PASSWORD)" in args.storage):
        raise UserError(
            "--storage_secret NAME and $(OPTUNA_DB_PASSWORD) in --storage go together: the Pods "
            "read the password from the Secret (kubectl create secret generic NAME "
            "--from-literal=password=...), so it is never in the manifest"
        )
    manifests = tuner_job_manifests(spec, args.workers, args.workers, secret)
    summary = f"{args.workers} tuner worker{'s' if args.workers > 1 else ''} of one study"
    return Launch(name, namespace, args.kube_context, manifests, args.workers, summary)


def launch_workers(
    args: argparse.Namespace, plan: dict[str, Any], parser: argparse.ArgumentParser
) -> int:
    """Prints (`--dry_run`) or submits the worker Job; returns the exit status."""
    if send(plan_workers(args, plan, parser), args.dry_run):
        print("when they are done, pick the winner: the same command with --sys local")
    return 0
