"""What `--sys tpu` and `--sys gke` share: check the flags, render, then print or submit.

Everything the Pod would trip over is checked before any request (image, names, the hparams set
built as the Pod will build it, the output dir: `gs://`, since a replaced Pod resumes only from a
checkpoint it can read back). A system subclasses `KubernetesSystem` and fills `shape()`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rl.errors import UserError, did_you_mean
from rl.hparams.compiled_path import runs_compiled
from rl.systems.manifests import (
    MAX_JOB_NAME,
    JobSpec,
    Manifest,
    check_dns_label,
    make_job_name,
    to_yaml,
)
from rl.utils import private_apis

# Launch flags of every Kubernetes system, and of one: with any other --sys a mistake (silently
# ignored otherwise); the Pod never sees them.
COMMON_FLAGS = ("image", "namespace", "kube_context", "dry_run", "job_name")
SYSTEM_FLAGS = {
    "tpu": ("tpu", "experimental_multihost"),
    "gke": ("workers", "gpus_per_worker", "gpu_type", "actor_nodes", "actor_node_cpus"),
}
LAUNCH_FLAGS = (*COMMON_FLAGS, *(flag for flags in SYSTEM_FLAGS.values() for flag in flags))
# `--preemption_grace` is above 0 and at most an hour (a Pod's grace period is that + 5 s).
MAX_PREEMPTION_GRACE_S = 3600.0
# Never forwarded either: the Pod runs `--sys local`; --list/--help do not launch.
NOT_FORWARDED = {"sys", "list", "help", *LAUNCH_FLAGS}

# A container image reference: [registry[:port]/]path[:tag][@sha256:digest].
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
IMAGE_REF = re.compile(
    rf"^(?:{_DOMAIN}(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$"
)
GCS_PATH = re.compile(r"^gs://[a-z0-9][a-z0-9._-]{1,220}[a-z0-9](/[^\s]*)?$")
REQUEST_TIMEOUT_S = 30
# Custom resources the launch creates (CustomObjectsApi), their plural and the hint for a
# cluster without their CRD (404; docs/tpu_gke.md, "Preemption and restarts").
CUSTOM_RESOURCES = {
    "JobSet": (
        "jobsets",
        "is the JobSet controller installed? (kubectl apply --server-side -f "
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml)",
    ),
    "RayJob": (
        "rayjobs",
        "is the KubeRay operator installed? (helm install kuberay-operator "
        "kuberay/kuberay-operator --version 1.7.0)",
    ),
}
# kubernetes 37 sends create bodies as JSON but with no Content-Type header (and ignores
# `_content_type` for these calls); the API server would assume JSON, but we say it.
REQUEST_OPTIONS = {
    "_request_timeout": REQUEST_TIMEOUT_S,
    "_headers": {"Content-Type": "application/json"},
}


@dataclass(frozen=True)
class Launch:
    """A validated launch: where it goes, what to send, what to tell the user."""

    name: str
    namespace: str
    context: str | None
    manifests: list[Manifest]
    pods: int  # Pods running at once: more than one needs a label selector to follow them
    summary: str  # e.g. "v5e-4 (2x2, 1 host, 4 chips each)"

    @property
    def workload(self) -> Manifest:
        return self.manifests[-1]  # a Service comes before the Job


def reject_launch_flags(args: argparse.Namespace) -> None:
    """A launch flag the chosen --sys does not take is a mistake: it would be ignored silently."""
    for flag in LAUNCH_FLAGS:
        if flag in COMMON_FLAGS:
            owners = list(SYSTEM_FLAGS)
        else:
            owners = [name for name, flags in SYSTEM_FLAGS.items() if flag in flags]
        if getattr(args, flag, None) not in (None, False) and args.sys not in owners:
            where = " or ".join(f"--sys {name}" for name in owners)
            raise UserError(f"--{flag} only applies to {where} (got --sys {args.sys})")


def pod_train_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[str]:
    """`--sys=local`, then every non-default non-launch flag."""
    out = ["--sys=local"]
    for action in private_apis.parser_actions(parser):
        dest = action.dest
        if dest in NOT_FORWARDED or not action.option_strings:
            continue
        value = getattr(args, dest, None)
        if value is None or value == action.default:
            continue
        out.append(f"--{dest}={value}")
    return out


def check_image(image: str | None, system: str, dockerfile: str) -> str:
    """`--image` is present and a container image reference; the hint names the Dockerfile."""
    if not image:
        raise UserError(
            f"--sys {system} needs --image: the container image built from {dockerfile} and "
            "pushed to a registry the cluster can pull from"
        )
    if not IMAGE_REF.match(image):
        raise UserError(
            f"--image {image!r} is not a container image reference "
            "([registry/]path[:tag][@sha256:digest])"
        )
    return image


def _check_hparams(
    args: argparse.Namespace, check_values: Callable[[Any], None] | None, shape: JobShape
) -> None:
    """Builds the hparams as the Pod will, so what the Pod would refuse fails here."""
    from rl import registry
    from rl.cli import hparams_from_args

    if not args.hparams:
        raise UserError("--hparams is required, e.g. --hparams dqn_cartpole (see --list)")
    hparams = hparams_from_args(args, check_values or (lambda hparams: None))
    agent = registry.agents.get(hparams.agent) if "agent" in hparams.keys() else None
    compiled = runs_compiled(hparams.env)
    _check_pod_strategy(args, shape.strategy, agent, compiled)
    if shape.check_actors is not None:
        shape.check_actors(args, hparams, compiled)


def _check_pod_strategy(
    args: argparse.Namespace, strategy: str, agent_class: type | None, compiled: bool
) -> None:
    """What would fail only once the Pods start training under `strategy` ($RL_STRATEGY)."""
    flag = getattr(args, "strategy", None)
    if flag is not None and flag != strategy:
        raise UserError(
            f"--strategy {flag} conflicts with --sys {args.sys}, whose Pods train with "
            f"strategy {strategy!r}; leave --strategy out"
        )
    if not args.training or strategy == "default":
        return
    if compiled:
        raise UserError(
            f"--sys {args.sys}: the compiled trainer (tf/ envs) runs on one device for now, "
            f"not under strategy {strategy!r}; use a gymnasium env or --sys local"
        )
    if agent_class is not None and not _supports_strategies(agent_class):
        from rl import registry

        able = [n for n in registry.agents.names() if _supports_strategies(registry.agents.get(n))]
        raise UserError(
            f"--sys {args.sys}: agent {agent_class.__name__} does not run under strategy "
            f"{strategy!r} yet (agents that do: {', '.join(able)}); use --sys local"
        )


def _supports_strategies(agent_class: type) -> bool:
    return bool(getattr(agent_class, "supports_strategies", True))


def _check_output_dir(output_dir: str | None, system: str) -> None:
    if not output_dir:
        raise UserError("--output_dir is required, e.g. --output_dir gs://BUCKET/runs/my_run")
    if output_dir.startswith("gs://") and not GCS_PATH.match(output_dir):
        raise UserError(
            f"--output_dir {output_dir!r} is not a valid gs:// path "
            "(gs://BUCKET/PATH, a bucket name of 3-222 lowercase letters, digits, '.', '_', '-')"
        )
    if not GCS_PATH.match(output_dir):
        raise UserError(
            f"--sys {system} needs a gs:// --output_dir (got {output_dir!r}): the Pod's disk "
            "is lost with the Pod, and a restarted Pod resumes from the checkpoint there"
        )


def check_namespace(args: argparse.Namespace) -> str:
    """`--namespace` ("default" if unset); also refuses an empty `--kube_context`."""
    namespace = check_dns_label(args.namespace or "default", "--namespace")
    if args.kube_context is not None and not args.kube_context.strip():
        raise UserError("--kube_context is empty; leave it out to use the current context")
    return namespace


def job_name(
    args: argparse.Namespace, stem: str, max_len: int = MAX_JOB_NAME, letter_first: bool = False
) -> str:
    """`--job_name` if valid, else a fresh name from `stem` (made once: every manifest uses it)."""
    if args.job_name:
        return check_dns_label(args.job_name, "--job_name", max_len, letter_first)
    return make_job_name(stem, max_len=max_len)


@dataclass(frozen=True)
class JobShape:
    """What one system adds to a launch, once its own flags are checked."""

    render: Callable[[JobSpec], list[Manifest]]  # the manifests, from the common JobSpec
    pods: int  # Pods running at once
    summary: str  # what runs, for the "submitted" line
    strategy: str  # the RL_STRATEGY the manifests give the Pods
    # The longest name the manifests allow, and whether it must start with a letter (JobSet
    # names are DNS-1035 labels: `rl.systems.manifests.jobset_max_name`).
    max_name: int = MAX_JOB_NAME
    letter_first: bool = False
    # Ray actors (--num_workers N > 1): refuses what the Pod's learner would (args, hparams,
    # compiled), and the flags the manifests add to the Pod's train.py.
    check_actors: Callable[[argparse.Namespace, Any, bool], None] | None = None
    train_args: tuple[str, ...] = ()


def plan_job(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    check_values: Callable[[Any], None] | None,
    shape: JobShape,
) -> Launch:
    """The checks every system shares, in the order a user fixes them, then `shape.render`."""
    namespace = check_namespace(args)
    if args.num_workers != 1 and shape.check_actors is None:
        raise UserError(
            f"--num_workers {args.num_workers} with --sys {args.sys} is not available yet; use 1 "
            "(--sys gke renders Ray actors)"
        )
    if args.ray_address is not None or args.actor_resources is not None:
        raise UserError(
            "--ray_address and --actor_resources join a Ray cluster you already have; with "
            f"--sys {args.sys} the launch makes the cluster and places the actors, so leave "
            "them out (docs/workers.md, GKE)"
        )
    if args.copies < 1:
        raise UserError(f"--copies must be >= 1, got {args.copies}")
    if args.test_episodes < 1:
        raise UserError(f"--test_episodes must be >= 1, got {args.test_episodes}")
    grace = args.preemption_grace
    if not 0 < grace <= MAX_PREEMPTION_GRACE_S:  # also False for nan
        raise UserError(
            f"--preemption_grace must be above 0 and at most {MAX_PREEMPTION_GRACE_S:g} seconds "
            f"(the Pod gets that plus 5 s before SIGKILL), got {grace:g}"
        )
    if args.render:
        raise UserError(
            f"--render opens a window, and a Pod has no display; with --sys {args.sys} use "
            "--record_video True (videos go to run_<i>/videos/ in --output_dir)"
        )
    _check_hparams(args, check_values, shape)
    _check_output_dir(args.output_dir, args.sys)
    name = job_name(args, args.hparams, shape.max_name, shape.letter_first)
    spec = JobSpec(
        name=name,
        namespace=namespace,
        image=args.image,
        train_args=[*pod_train_args(args, parser), *shape.train_args],
        hparams_set=args.hparams,
        preemption_grace=grace,
    )
    manifests = shape.render(spec)
    return Launch(name, namespace, args.kube_context, manifests, shape.pods, shape.summary)


def load_client_configuration(context: str | None, config_file: str | None = None) -> Any:
    """The kubeconfig's `context` (current if None), or a UserError."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    # $KUBECONFIG is read now, not when `kubernetes` was imported (its own default is frozen).
    config_file = config_file or os.environ.get("KUBECONFIG") or None
    try:
        contexts, active = config.list_kube_config_contexts(config_file=config_file)
    except (ConfigException, OSError) as error:
        raise UserError(
            f"cannot read a kubeconfig ({error}); run `gcloud container clusters "
            "get-credentials CLUSTER --location LOCATION` first, or use --dry_run"
        ) from None
    names = [c["name"] for c in contexts or []]
    if context is not None and context not in names:
        raise UserError(
            f"--kube_context {context!r} is not in the kubeconfig{did_you_mean(context, names)}; "
            f"contexts: {', '.join(names) or '(none)'}"
        )
    if context is None and not active:
        raise UserError("the kubeconfig has no current context; pass --kube_context NAME")
    configuration = client.Configuration()
    try:
        config.load_kube_config(
            config_file=config_file, context=context, client_configuration=configuration
        )
    except (ConfigException, OSError) as error:
        raise UserError(
            f"cannot load kubeconfig context {context or active['name']!r}: {error}"
        ) from None
    return configuration


def submit(launch: Launch, configuration: Any) -> None:
    """Creates the Service (if any), then the workload; a refused workload removes its Service."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    from urllib3.exceptions import HTTPError

    with client.ApiClient(configuration) as api:
        core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
        custom = client.CustomObjectsApi(api)
        created: list[Manifest] = []
        for manifest in launch.manifests:
            kind = manifest["kind"]
            try:
                if kind == "Service":
                    core.create_namespaced_service(launch.namespace, manifest, **REQUEST_OPTIONS)
                elif kind in CUSTOM_RESOURCES:
                    group, version = manifest["apiVersion"].split("/")
                    plural = CUSTOM_RESOURCES[kind][0]
                    custom.create_namespaced_custom_object(
                        group, version, launch.namespace, plural, manifest, **REQUEST_OPTIONS
                    )
                else:
                    batch.create_namespaced_job(launch.namespace, manifest, **REQUEST_OPTIONS)
            except ApiException as error:
                _undo(core, launch.namespace, created)
                missing = kind in CUSTOM_RESOURCES and error.status == 404
                hint = f"; {CUSTOM_RESOURCES[kind][1]}" if missing else ""
                raise UserError(
                    f"the Kubernetes API refused {kind} {launch.name!r} in namespace "
                    f"{launch.namespace!r}: {error.status} {error.reason}"
                    f"{_api_message(error.body)}{hint}"
                ) from None
            except HTTPError as error:
                _undo(core, launch.namespace, created)
                raise UserError(
                    f"cannot reach the Kubernetes API at {configuration.host}: "
                    f"{getattr(error, 'reason', None) or error}"
                ) from None
            created.append(manifest)


def _api_message(body: Any) -> str:
    """' (Reason: message)' from a Kubernetes Status body, or ''."""
    try:
        status = json.loads(body)
        reason, message = status.get("reason"), status.get("message")
    except (TypeError, ValueError, AttributeError):
        return ""
    text = ": ".join(part for part in (reason, message) if part)
    return f" ({text})" if text else ""


def _undo(core: Any, namespace: str, created: list[Manifest]) -> None:
    """Best effort (the refusal is the error worth reporting): delete the Services created."""
    for manifest in created:
        if manifest["kind"] == "Service":
            with contextlib.suppress(Exception):
                core.delete_namespaced_service(
                    manifest["metadata"]["name"], namespace, _request_timeout=REQUEST_TIMEOUT_S
                )


def send(launch: Launch, dry_run: bool, config_file: str | None = None) -> bool:
    """Prints the manifests as YAML (`--dry_run`: False) or submits them (True)."""
    if dry_run:
        sys.stdout.write(to_yaml(launch.manifests))
        return False
    submit(launch, load_client_configuration(launch.context, config_file))
    what = f"{launch.workload['kind'].lower()}/{launch.name}"
    print(f"submitted {what} to namespace {launch.namespace}: {launch.summary}")
    print(f"follow the logs:  {follow_command(launch)}")
    return True


def follow_command(launch: Launch) -> str:
    """The kubectl command that streams the logs: one Pod by job name, several by label."""
    context = f" --context {launch.context}" if launch.context else ""
    # A RayJob's submitter Job streams the Ray job's logs.
    if launch.pods > 1 and launch.workload["kind"] != "RayJob":
        return (
            f"kubectl logs -f -n {launch.namespace}{context} --prefix "
            f"--max-log-requests {launch.pods} -l app.kubernetes.io/instance={launch.name}"
        )
    return f"kubectl logs -f job/{launch.name} -n {launch.namespace}{context}"


class KubernetesSystem:
    """A `--sys` entry that launches on Kubernetes: subclasses set `name` and fill `shape()`."""

    name = ""

    def __call__(self, jobs: list[Callable[[], object]]) -> list[object]:
        raise UserError(f"--sys {self.name} submits a Kubernetes Job; it does not run jobs here")

    def shape(self, args: argparse.Namespace) -> JobShape:
        raise NotImplementedError

    def plan(
        self,
        args: argparse.Namespace,
        parser: argparse.ArgumentParser,
        check_values: Callable[[Any], None] | None = None,
    ) -> Launch:
        """Validates every flag and renders the manifests; sends nothing. Raises UserError."""
        reject_launch_flags(args)
        return plan_job(args, parser, check_values, self.shape(args))

    def launch(
        self,
        args: argparse.Namespace,
        parser: argparse.ArgumentParser,
        check_values: Callable[[Any], None] | None = None,
        config_file: str | None = None,
    ) -> int:
        """Checks, renders, then prints (`--dry_run`) or submits; returns the exit status."""
        if send(self.plan(args, parser, check_values), args.dry_run, config_file):
            resume = f"run the same command again (output_dir {args.output_dir})"
            print(f"resume after a failure: {resume}")
        return 0
