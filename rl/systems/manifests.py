"""Kubernetes manifests for `--sys tpu` and `--sys gke` (multi-worker CPU/GPU), as Python dicts.

Every manifest is a plain dict in the API's wire format (camelCase keys), so the same object is
printed by `--dry_run` (YAML for `kubectl apply -f -`), sent by the official `kubernetes` client,
and checked against the official OpenAPI schemas by `kubernetes-validate` in the tests. Resource
quantities are strings (`google.com/tpu: "4"`): the API's `Quantity` type is a string, and the
`kubernetes` 37 client refuses integers. One name is generated up front and used everywhere
(Job, Service, labels, Pod subdomain, worker host names).

Three shapes:
- `tpu_job_manifests`, single host: a Job with one Pod on one TPU VM. A failed Pod is replaced
  (`backoffLimit`) and the new one resumes from the last checkpoint in `--output_dir`.
- `tpu_job_manifests`, multi host (`--experimental_multihost`): an Indexed Job with one Pod per
  TPU VM of the slice, plus a headless Service that gives each Pod a DNS name.
- `worker_job_manifests` (`--sys gke`): an Indexed Job + headless Service for
  MultiWorkerMirroredStrategy on CPU or GPU nodes; each Pod builds TF_CONFIG in-process
  (`rl.systems.tf_config`).

`python -m rl.systems.manifests k8s/` rewrites the example manifests checked into k8s/.
"""

from __future__ import annotations

import datetime
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rl.errors import UserError
from rl.systems.tpu_types import TpuSlice, parse_tpu

Manifest = dict[str, Any]

# DNS-1123 label: namespaces, Service names and (here) Job names. Job names are kept to
# MAX_JOB_NAME so that Indexed Job Pod hostnames `<job>-<index>` stay valid labels too.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_JOB_NAME = 52
WORKDIR = "/app"
TPU_RUNTIME_PORT = 8471
WORKER_PORT = 2222
# RL_STRATEGY of the Pods (`rl.systems.strategies` names): what their train.py trains under.
TPU_STRATEGY = "tpu"
WORKER_STRATEGY = "multi_worker_mirrored"


def check_dns_label(value: str, what: str, max_len: int = 63) -> str:
    """Returns `value` if it is a DNS-1123 label of at most `max_len` chars, else a UserError."""
    if len(value) > max_len or not DNS_LABEL.match(value):
        raise UserError(
            f"{what} {value!r} is not a valid Kubernetes name: use at most {max_len} lowercase "
            "letters, digits and '-', starting and ending with a letter or digit"
        )
    return value


def make_job_name(
    hparams_set: str, now: datetime.datetime | None = None, rng: random.Random | None = None
) -> str:
    """`rl-<set>-<yyyymmdd-hhmmss>-<4 random>`: a valid DNS-1123 label of <= MAX_JOB_NAME chars,
    unique enough that re-running a command never collides with the previous Job."""
    now = now or datetime.datetime.now(datetime.UTC)
    rng = rng or random.SystemRandom()
    suffix = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(4))
    stamp = now.strftime("%Y%m%d-%H%M%S")
    tail = f"-{stamp}-{suffix}"
    room = MAX_JOB_NAME - len("rl-") - len(tail)
    middle = re.sub(r"[^a-z0-9]+", "-", hparams_set.lower()).strip("-")[:room].strip("-")
    return f"rl-{middle}{tail}" if middle else f"rl{tail}"


def _label_value(text: str) -> str:
    """A label value: <= 63 chars of [A-Za-z0-9_.-], alphanumeric at both ends."""
    value = re.sub(r"[^A-Za-z0-9_.-]+", "-", text)[:63]
    return value.strip("-_.") or "none"


@dataclass(frozen=True)
class JobSpec:
    """What every manifest needs; `train_args` are train.py's flags for the Pod."""

    name: str
    namespace: str
    image: str
    train_args: list[str]
    hparams_set: str
    env: dict[str, str] = field(default_factory=dict)

    def labels(self) -> dict[str, str]:
        return {
            "app.kubernetes.io/name": "rl",
            "app.kubernetes.io/instance": self.name,
            "app.kubernetes.io/managed-by": "rl-train",
            "rl/hparams": _label_value(self.hparams_set),
        }

    def metadata(self) -> Manifest:
        return {"name": self.name, "namespace": self.namespace, "labels": self.labels()}


def _env(values: dict[str, str]) -> list[Manifest]:
    return [{"name": key, "value": str(value)} for key, value in values.items()]


def _container(
    spec: JobSpec,
    env: list[Manifest],
    resources: dict[str, str],
    command: tuple[str, ...] = ("python", "train.py"),
) -> Manifest:
    container: Manifest = {
        "name": "trainer",
        "image": spec.image,
        "workingDir": WORKDIR,
        "command": list(command),
        "args": list(spec.train_args),
        "env": env,
    }
    if resources:
        container["resources"] = {"requests": dict(resources), "limits": dict(resources)}
    return container


def _headless_service(spec: JobSpec, port: int, port_name: str) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": spec.metadata(),
        "spec": {
            "clusterIP": "None",
            # Workers must find each other before any of them reports ready.
            "publishNotReadyAddresses": True,
            "selector": {"app.kubernetes.io/instance": spec.name},
            "ports": [{"name": port_name, "port": port, "targetPort": port}],
        },
    }


def _job(spec: JobSpec, pod_spec: Manifest, *, pods: int, backoff_limit: int) -> Manifest:
    job_spec: Manifest = {
        "backoffLimit": backoff_limit,
        "completions": pods,
        "parallelism": pods,
        "template": {"metadata": {"labels": spec.labels()}, "spec": pod_spec},
    }
    if pods > 1:
        job_spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": spec.metadata(), "spec": job_spec}


def tpu_job_manifests(spec: JobSpec, tpu: TpuSlice, backoff_limit: int = 3) -> list[Manifest]:
    """The Job (and, for a multi-host slice, the headless Service first) for one TPU slice.

    Single host: `restartPolicy: Never` + `backoffLimit` means a crashed or evicted Pod is
    replaced by a new Pod, possibly on another node, which runs the same train.py command and
    so resumes from the last checkpoint in the (gs://) output dir.
    Multi host: every Pod of the slice must run at once, so one failure fails the Job
    (`backoffLimit: 0`); run the same command again to resume (see docs/tpu_gke.md).
    """
    env = {
        "RL_STRATEGY": TPU_STRATEGY,
        "RL_TPU_TYPE": tpu.name,
        "RL_JOB_NAME": spec.name,
        "PYTHONUNBUFFERED": "1",
        **spec.env,
    }
    env_list = _env(env)
    pod: Manifest = {
        "restartPolicy": "Never",
        "nodeSelector": {
            "cloud.google.com/gke-tpu-accelerator": tpu.accelerator,
            "cloud.google.com/gke-tpu-topology": tpu.topology,
        },
        "terminationGracePeriodSeconds": 60,
    }
    resources = {"google.com/tpu": str(tpu.chips_per_host)}
    if not tpu.multi_host:
        pod["containers"] = [_container(spec, env_list, resources)]
        return [_job(spec, pod, pods=1, backoff_limit=backoff_limit)]

    hosts = ",".join(f"{spec.name}-{i}.{spec.name}" for i in range(tpu.hosts))
    env_list += [
        {
            "name": "TPU_WORKER_ID",
            "valueFrom": {
                "fieldRef": {
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                }
            },
        },
        {"name": "TPU_WORKER_HOSTNAMES", "value": hosts},
    ]
    container = _container(spec, env_list, resources)
    container["ports"] = [{"name": "tpu-runtime", "containerPort": TPU_RUNTIME_PORT}]
    pod["containers"] = [container]
    pod["subdomain"] = spec.name
    return [
        _headless_service(spec, TPU_RUNTIME_PORT, "tpu-runtime"),
        _job(spec, pod, pods=tpu.hosts, backoff_limit=0),
    ]


def worker_job_manifests(
    spec: JobSpec,
    workers: int,
    gpus_per_worker: int = 0,
    gpu_type: str | None = None,
    backoff_limit: int = 0,
) -> list[Manifest]:
    """Headless Service + Indexed Job of `workers` Pods for MultiWorkerMirroredStrategy.

    Each Pod gets JOB_COMPLETION_INDEX from the Job controller and RL_NUM_WORKERS, RL_JOB_NAME,
    RL_SERVICE, RL_WORKER_PORT from here; `rl.systems.tf_config.install_tf_config()` turns them
    into TF_CONFIG inside the trainer process. GPUs are requested as `nvidia.com/gpu` (GKE adds
    the toleration for its GPU node taint itself); `gpu_type` selects the node pool by its
    `cloud.google.com/gke-accelerator` label, which Autopilot needs to pick a GPU.
    """
    if workers < 1:
        raise UserError(f"workers must be >= 1, got {workers}")
    env = {
        "RL_STRATEGY": WORKER_STRATEGY,
        "RL_NUM_WORKERS": str(workers),
        "RL_JOB_NAME": spec.name,
        "RL_SERVICE": spec.name,
        "RL_WORKER_PORT": str(WORKER_PORT),
        "PYTHONUNBUFFERED": "1",
        **spec.env,
    }
    resources = {"nvidia.com/gpu": str(gpus_per_worker)} if gpus_per_worker else {}
    container = _container(spec, _env(env), resources)
    container["ports"] = [{"name": "tf-worker", "containerPort": WORKER_PORT}]
    pod: Manifest = {"restartPolicy": "Never", "subdomain": spec.name}
    if gpu_type:
        pod["nodeSelector"] = {"cloud.google.com/gke-accelerator": gpu_type}
    pod["containers"] = [container]
    job = _job(spec, pod, pods=workers, backoff_limit=backoff_limit)
    job["spec"]["completionMode"] = "Indexed"  # TF_CONFIG needs an index even for one worker
    return [_headless_service(spec, WORKER_PORT, "tf-worker"), job]


def tuner_job_manifests(
    spec: JobSpec, workers: int, backoff_limit: int, secret: str | None = None
) -> list[Manifest]:
    """A Job of `workers` Pods, each one worker of one Optuna study (`python -m rl.tune` with
    `spec.train_args`). They share nothing but the study's storage, so there is no Service and
    no TF_CONFIG; a failed Pod is replaced (`backoff_limit`), and its running trial is failed by
    the heartbeat and re-run by another worker. `secret`: a Kubernetes Secret whose `password`
    key becomes OPTUNA_DB_PASSWORD, which Kubernetes substitutes for `$(OPTUNA_DB_PASSWORD)` in
    the args (so the storage URL in the manifest carries no password)."""
    if workers < 1:
        raise UserError(f"workers must be >= 1, got {workers}")
    env = _env({"PYTHONUNBUFFERED": "1", **spec.env})
    if secret:
        reference = {"secretKeyRef": {"name": secret, "key": "password"}}
        env.append({"name": "OPTUNA_DB_PASSWORD", "valueFrom": reference})
    container = _container(spec, env, {}, command=("python", "-m", "rl.tune"))
    pod: Manifest = {"restartPolicy": "Never", "containers": [container]}
    job = _job(spec, pod, pods=workers, backoff_limit=backoff_limit)
    job["spec"].pop("completionMode", None)  # the workers are interchangeable: no index
    return [job]


def to_yaml(manifests: list[Manifest]) -> str:
    """Multi-document YAML for `kubectl apply -f -`; keys keep their natural order."""
    return yaml.safe_dump_all(manifests, sort_keys=False, default_flow_style=False)


# ----------------------------------------------------------------- examples checked into k8s/

EXAMPLE_ARGS = [
    "--sys=local",
    "--hparams=dqn_cartpole",
    "--output_dir=gs://BUCKET/runs/dqn_cartpole",
]


def example_manifests() -> dict[str, list[Manifest]]:
    """{file name: manifests} of the examples in k8s/ (fixed names, placeholder image/bucket)."""

    def spec(name: str, image: str) -> JobSpec:
        return JobSpec(name, "default", image, EXAMPLE_ARGS, "dqn_cartpole")

    registry = "us-docker.pkg.dev/PROJECT/rl"
    return {
        "tpu-single-host.yaml": tpu_job_manifests(
            spec("rl-example-tpu", f"{registry}/rl-tpu:latest"), parse_tpu("v5e-4")
        ),
        "tpu-multi-host.yaml": tpu_job_manifests(
            spec("rl-example-tpu-multihost", f"{registry}/rl-tpu:latest"), parse_tpu("v5e-16")
        ),
        "workers-cpu.yaml": worker_job_manifests(
            spec("rl-example-workers-cpu", f"{registry}/rl-cpu:latest"), workers=2
        ),
        "workers-gpu.yaml": worker_job_manifests(
            spec("rl-example-workers-gpu", f"{registry}/rl-gpu:latest"),
            workers=2,
            gpus_per_worker=1,
            gpu_type="nvidia-l4",
        ),
    }


# The `train.py` command that prints each example's shape (with your names) on stdout.
EXAMPLE_COMMANDS = {
    "tpu-single-host.yaml": "--sys tpu --tpu v5e-4",
    "tpu-multi-host.yaml": "--sys tpu --tpu v5e-16 --experimental_multihost",
    "workers-cpu.yaml": "--sys gke --workers 2",
    "workers-gpu.yaml": "--sys gke --workers 2 --gpus_per_worker 1 --gpu_type nvidia-l4",
}


def example_text(file_name: str, manifests: list[Manifest]) -> str:
    header = (
        f"# k8s/{file_name}: generated by `python -m rl.systems.manifests k8s/`; do not edit.\n"
        "# The same shape, with your image, names and flags, is printed by\n"
        f"#   python train.py {EXAMPLE_COMMANDS[file_name]} ... --dry_run\n"
    )
    return header + to_yaml(manifests)


def write_examples(directory: str | Path) -> list[Path]:
    written = []
    for file_name, manifests in example_manifests().items():
        path = Path(directory) / file_name
        path.write_text(example_text(file_name, manifests), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_examples(sys.argv[1] if len(sys.argv) > 1 else "k8s"):
        print(path)
