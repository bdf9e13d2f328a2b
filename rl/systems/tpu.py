"""`--sys tpu`: train on a Cloud TPU slice as a Kubernetes Job on GKE.

    python train.py --sys tpu --tpu v5e-4 --image IMAGE --hparams ppo_pong \\
        --output_dir gs://BUCKET/runs/ppo_pong [--namespace NS] [--kube_context CTX] [--dry_run]

Everything is checked here first, with no request sent: the TPU type and topology
(`rl.systems.tpu_types`), the image reference, the namespace and job names, the hparams set and
its overrides, and the output dir. The output dir must be `gs://`: the Pod's disk disappears
with the Pod, and a replaced Pod resumes only from a checkpoint it can read back. Then the
manifests are rendered (`rl.systems.manifests`) and either printed as YAML (`--dry_run`) or sent
through the official `kubernetes` client with the user's kubeconfig and context.

The Pod runs this same train.py with the same flags, except `--sys local` and none of the
launch flags; its environment carries RL_STRATEGY=tpu for `rl.systems.strategies`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rl.errors import UserError, did_you_mean
from rl.registry import register_system
from rl.systems.manifests import (
    MAX_JOB_NAME,
    JobSpec,
    Manifest,
    check_dns_label,
    make_job_name,
    to_yaml,
    tpu_job_manifests,
)
from rl.systems.tpu_types import TpuSlice, parse_tpu, tpu_type_names

# Flags that configure the launch itself; the Pod's train.py never sees them.
LAUNCH_FLAGS = (
    "tpu",
    "image",
    "namespace",
    "kube_context",
    "dry_run",
    "experimental_multihost",
    "job_name",
)
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
# kubernetes 37 sends create bodies as JSON but with no Content-Type header (and ignores
# `_content_type` for these calls); the API server would assume JSON, but we say it.
REQUEST_OPTIONS = {
    "_request_timeout": REQUEST_TIMEOUT_S,
    "_headers": {"Content-Type": "application/json"},
}


@dataclass(frozen=True)
class Launch:
    """A validated launch: the slice, where it goes, and the manifests to send."""

    tpu: TpuSlice
    name: str
    namespace: str
    context: str | None
    manifests: list[Manifest]


def pod_train_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[str]:
    """train.py's flags for the Pod: every flag the user set (non-default), as `--name=value`,
    after `--sys=local`, and none of the launch flags."""
    out = ["--sys=local"]
    for action in parser._actions:  # argparse has no public accessor for its actions
        dest = action.dest
        if dest in NOT_FORWARDED or not action.option_strings:
            continue
        value = getattr(args, dest, None)
        if value is None or value == action.default:
            continue
        out.append(f"--{dest}={value}")
    return out


def reject_launch_flags(args: argparse.Namespace) -> None:
    """With a local --sys, a launch flag is a mistake (it would be silently ignored)."""
    for flag in LAUNCH_FLAGS:
        value = getattr(args, flag, None)
        if value not in (None, False):
            raise UserError(f"--{flag} only applies to --sys tpu (got --sys {args.sys})")


def _check_hparams(args: argparse.Namespace, check_values: Callable[[Any], None] | None) -> None:
    """Builds the hparams exactly as the Pod will, so a bad set or override fails here."""
    from rl import registry
    from rl.envs import check_env_name

    if not args.hparams:
        raise UserError("--hparams is required, e.g. --hparams dqn_cartpole (see --list)")
    hparams = registry.get_hparams(args.hparams)()
    hparams.override(args.hparam_override)
    if args.env is not None:
        hparams.env = args.env
    if args.train_steps is not None:
        hparams.train_steps = args.train_steps
    if args.eval_episodes is not None:
        hparams.eval.episodes = args.eval_episodes
    if check_values is not None:
        check_values(hparams)
    hparams.freeze()
    check_env_name(hparams.env)
    for key, reg in (("agent", registry.agents), ("model", registry.models)):
        if key in hparams.keys():
            reg.get(getattr(hparams, key))
    if "memory" in hparams.keys():
        registry.memory.get(hparams.memory)


def plan(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    check_values: Callable[[Any], None] | None = None,
    job_name: str | None = None,
) -> Launch:
    """Validates every flag and renders the manifests; sends nothing. Raises UserError."""
    if not args.tpu:
        raise UserError(
            "--sys tpu needs --tpu TYPE (e.g. --tpu v5e-4; valid: "
            f"{', '.join(tpu_type_names())}); to train on this machine use --sys local"
        )
    tpu = parse_tpu(args.tpu)
    if tpu.multi_host and not args.experimental_multihost:
        raise UserError(
            f"--tpu {tpu.name} spans {tpu.hosts} hosts ({tpu.topology}); multi-host TF on GKE "
            "is untested, so it needs --experimental_multihost (or use a one-host type such as "
            f"{_largest_single_host(tpu.generation)})"
        )
    if not args.image:
        raise UserError(
            "--sys tpu needs --image: the container image built from k8s/Dockerfile.tpu and "
            "pushed to a registry the cluster can pull from"
        )
    if not IMAGE_REF.match(args.image):
        raise UserError(
            f"--image {args.image!r} is not a container image reference "
            "([registry/]path[:tag][@sha256:digest])"
        )
    namespace = check_dns_label(args.namespace or "default", "--namespace")
    if args.kube_context is not None and not args.kube_context.strip():
        raise UserError("--kube_context is empty; leave it out to use the current context")
    if args.num_workers != 1:
        raise UserError(f"--num_workers {args.num_workers} is not available yet; use 1")
    if args.copies < 1:
        raise UserError(f"--copies must be >= 1, got {args.copies}")
    if args.test_episodes < 1:
        raise UserError(f"--test_episodes must be >= 1, got {args.test_episodes}")
    _check_hparams(args, check_values)
    if not args.output_dir:
        raise UserError("--output_dir is required, e.g. --output_dir gs://BUCKET/runs/my_run")
    if args.output_dir.startswith("gs://") and not GCS_PATH.match(args.output_dir):
        raise UserError(
            f"--output_dir {args.output_dir!r} is not a valid gs:// path "
            "(gs://BUCKET/PATH, a bucket name of 3-222 lowercase letters, digits, '.', '_', '-')"
        )
    if not GCS_PATH.match(args.output_dir):
        raise UserError(
            f"--sys tpu needs a gs:// --output_dir (got {args.output_dir!r}): the Pod's disk "
            "is lost with the Pod, and a restarted Pod resumes from the checkpoint there"
        )
    if args.job_name:
        name = check_dns_label(args.job_name, "--job_name", MAX_JOB_NAME)
    else:
        name = job_name or make_job_name(args.hparams)
    spec = JobSpec(
        name=name,
        namespace=namespace,
        image=args.image,
        train_args=pod_train_args(args, parser),
        hparams_set=args.hparams,
    )
    return Launch(tpu, name, namespace, args.kube_context, tpu_job_manifests(spec, tpu))


def _largest_single_host(generation: str) -> str:
    from rl.systems.tpu_types import TPU_TYPES

    sizes = [t.name for t in TPU_TYPES.values() if t.generation == generation and not t.multi_host]
    return sizes[-1]


def load_client_configuration(context: str | None, config_file: str | None = None) -> Any:
    """The `kubernetes` client Configuration of the kubeconfig's `context` (current if None).
    A missing kubeconfig or an unknown context is a UserError; nothing is sent."""
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
    """Creates the Service (multi host) and the Job through the official client."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    from urllib3.exceptions import HTTPError

    with client.ApiClient(configuration) as api:
        core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
        created: list[Manifest] = []
        for manifest in launch.manifests:
            kind = manifest["kind"]
            try:
                if kind == "Service":
                    core.create_namespaced_service(launch.namespace, manifest, **REQUEST_OPTIONS)
                else:
                    batch.create_namespaced_job(launch.namespace, manifest, **REQUEST_OPTIONS)
            except ApiException as error:
                _undo(core, launch.namespace, created)
                raise UserError(
                    f"the Kubernetes API refused {kind} {launch.name!r} in namespace "
                    f"{launch.namespace!r}: {error.status} {error.reason}"
                    f"{_api_message(error.body)}"
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
    import json

    try:
        status = json.loads(body)
        reason, message = status.get("reason"), status.get("message")
    except (TypeError, ValueError, AttributeError):
        return ""
    text = ": ".join(part for part in (reason, message) if part)
    return f" ({text})" if text else ""


def _undo(core: Any, namespace: str, created: list[Manifest]) -> None:
    """Best effort: delete the Service created for a Job that was then refused."""
    for manifest in created:
        if manifest["kind"] == "Service":
            try:
                core.delete_namespaced_service(
                    manifest["metadata"]["name"], namespace, _request_timeout=REQUEST_TIMEOUT_S
                )
            except Exception:  # noqa: BLE001 - the refusal is the error worth reporting
                pass


def follow_command(launch: Launch) -> str:
    context = f" --context {launch.context}" if launch.context else ""
    if launch.tpu.multi_host:
        return (
            f"kubectl logs -f -n {launch.namespace}{context} --prefix "
            f"--max-log-requests {launch.tpu.hosts} -l app.kubernetes.io/instance={launch.name}"
        )
    return f"kubectl logs -f job/{launch.name} -n {launch.namespace}{context}"


class TpuSystem:
    """The `tpu` entry of the systems registry: it launches instead of running jobs here."""

    def __call__(self, jobs: list[Callable[[], object]]) -> list[object]:
        raise UserError("--sys tpu submits a Kubernetes Job; it does not run jobs in-process")

    def launch(
        self,
        args: argparse.Namespace,
        parser: argparse.ArgumentParser,
        check_values: Callable[[Any], None] | None = None,
        config_file: str | None = None,
    ) -> int:
        launch = plan(args, parser, check_values)
        if args.dry_run:
            sys.stdout.write(to_yaml(launch.manifests))
            return 0
        configuration = load_client_configuration(launch.context, config_file)
        submit(launch, configuration)
        tpu = launch.tpu
        print(
            f"submitted job/{launch.name} to namespace {launch.namespace}: {tpu.name} "
            f"({tpu.topology}, {tpu.hosts} host{'s' if tpu.hosts > 1 else ''}, "
            f"{tpu.chips_per_host} chips each)"
        )
        print(f"follow the logs:  {follow_command(launch)}")
        print(f"resume after a failure: run the same command again (output_dir {args.output_dir})")
        return 0


register_system("tpu", TpuSystem())
