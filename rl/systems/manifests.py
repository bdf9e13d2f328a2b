"""Kubernetes manifests for `--sys tpu` and `--sys gke`, as plain dicts in the API's wire format:
printed by `--dry_run`, sent by the `kubernetes` client, checked against the OpenAPI schemas in
the tests. Quantities are strings (the `kubernetes` 37 client refuses integers). One Pod is a Job
whose `podFailurePolicy` tells a preemption from a crash; several Pods are a JobSet restarted as
one, since a worker cannot rejoin a running collective (docs/tpu_gke.md). `python -m
rl.systems.manifests k8s/` rewrites the examples in k8s/.
"""

from __future__ import annotations

import datetime
import math
import random
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rl.errors import DIVERGED_EXIT, PREEMPTED_EXIT, UserError
from rl.preemption import DEFAULT_GRACE_SECONDS
from rl.systems.tpu_types import TpuSlice, parse_tpu

Manifest = dict[str, Any]

# DNS-1123 label: namespaces, Service names and (here) Job names. Job names are kept to
# MAX_JOB_NAME so that Indexed Job Pod hostnames `<job>-<index>` stay valid labels too.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_JOB_NAME = 52
WORKDIR = "/app"
TPU_RUNTIME_PORT = 8471
WORKER_PORT = 2222
# The Pods' RL_STRATEGY (`rl.distribute.strategies` names).
TPU_STRATEGY = "tpu"
WORKER_STRATEGY = "multi_worker_mirrored"
CONTAINER = "trainer"

# train.py's exit statuses that the failure policies tell apart (docs/tpu_gke.md, "Preemption
# and restarts"); anything else (1, a signal) is a crash. A retry after 2 or 3 fails the same way.
# 69 (no node for the Ray actors, rl/errors.py) is counted as a crash on purpose: a restart does
# not bring the nodes back, so it must not be retried for free as 75 is.
EXIT_PREEMPTED = PREEMPTED_EXIT  # 75: checkpointed on SIGTERM, or stopped by the watchdog
EXIT_USER_ERROR = 2
EXIT_DIVERGED = DIVERGED_EXIT
# Crashes (not preemptions) tolerated: a one-Pod Job's `backoffLimit`, a JobSet's `maxRestarts`.
CRASH_RETRIES = 3
GRACE_MARGIN_S = 5  # SIGTERM to SIGKILL: train.py's --preemption_grace plus this, for the exit

JOBSET_API_VERSION = "jobset.x-k8s.io/v1alpha2"
# The one replicated Job of a JobSet: its child Job is `<jobset>-workers-0`, Pod i's hostname
# `<jobset>-workers-0-<i>`, reachable as `<jobset>-workers-0-<i>.<jobset>`.
REPLICATED_JOB = "workers"
# The JobSet webhook refuses a name whose longest Pod name, `<jobset>-<replicated job>-<job
# index>-<pod index>-<5 random chars>`, is over 63 characters.
_POD_NAME_SUFFIX = len("-abcde")


def check_dns_label(value: str, what: str, max_len: int = 63, letter_first: bool = False) -> str:
    """`value` if a DNS-1123 label (DNS-1035 if `letter_first`, as JobSet names), else UserError."""
    if (
        len(value) > max_len
        or not DNS_LABEL.match(value)
        or (letter_first and not value[0].isalpha())
    ):
        start = "a letter" if letter_first else "a letter or digit"
        raise UserError(
            f"{what} {value!r} is not a valid Kubernetes name: use at most {max_len} lowercase "
            f"letters, digits and '-', starting with {start} and ending with a letter or digit"
        )
    return value


def jobset_max_name(pods: int) -> int:
    """The longest JobSet name whose `pods` Pods all get valid names (see _POD_NAME_SUFFIX)."""
    return 63 - _POD_NAME_SUFFIX - len(f"-{REPLICATED_JOB}-0-{pods - 1}")


def make_job_name(
    hparams_set: str,
    now: datetime.datetime | None = None,
    rng: random.Random | None = None,
    max_len: int = MAX_JOB_NAME,
) -> str:
    """`rl-<set>-<yyyymmdd-hhmmss>-<4 random>`: re-running a command never collides."""
    now = now or datetime.datetime.now(datetime.UTC)
    rng = rng or random.SystemRandom()
    suffix = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(4))
    stamp = now.strftime("%Y%m%d-%H%M%S")
    tail = f"-{stamp}-{suffix}"
    room = max_len - len("rl-") - len(tail)
    middle = re.sub(r"[^a-z0-9]+", "-", hparams_set.lower()).strip("-")[:room].strip("-")
    return f"rl-{middle}{tail}" if middle else f"rl{tail}"


def _label_value(text: str) -> str:
    """A label value: <= 63 chars of [A-Za-z0-9_.-], alphanumeric at both ends."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text)[:63].strip("-_.") or "none"


@dataclass(frozen=True)
class JobSpec:
    """What every manifest needs."""

    name: str
    namespace: str
    image: str
    train_args: list[str]  # train.py's flags for the Pod
    hparams_set: str
    env: dict[str, str] = field(default_factory=dict)
    preemption_grace: float = DEFAULT_GRACE_SECONDS  # train.py's --preemption_grace

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


def termination_grace_seconds(preemption_grace: float) -> int:
    """SIGKILL only after train.py's own watchdog (`--preemption_grace`) has ended it."""
    return math.ceil(preemption_grace) + GRACE_MARGIN_S


def _container(
    spec: JobSpec,
    env: list[Manifest],
    resources: dict[str, str],
    command: tuple[str, ...] = ("python", "train.py"),
) -> Manifest:
    container: Manifest = {
        "name": CONTAINER,
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


def pod_failure_policy(on_preemption: str) -> Manifest:
    """First match wins: a preempted Pod gets `on_preemption` (`Ignore`: replaced for free;
    `FailJob`: a message `jobset_failure_policy` reads), exit 2 or 3 fails the Job at once, any
    other failure counts against `backoffLimit` (needs `restartPolicy: Never`)."""

    def on_exit(action: str, *codes: int) -> Manifest:
        exits = {"containerName": CONTAINER, "operator": "In", "values": list(codes)}
        return {"action": action, "onExitCodes": exits}

    disrupted = [{"type": "DisruptionTarget", "status": "True"}]
    return {
        "rules": [
            {"action": on_preemption, "onPodConditions": disrupted},
            on_exit(on_preemption, EXIT_PREEMPTED),
            on_exit("FailJob", EXIT_USER_ERROR, EXIT_DIVERGED),
        ]
    }


def _job_spec(
    spec: JobSpec, pod_spec: Manifest, pods: int, backoff_limit: int, on_preemption: str
) -> Manifest:
    return {
        "backoffLimit": backoff_limit,
        "completions": pods,
        "parallelism": pods,
        "completionMode": "Indexed",
        "podFailurePolicy": pod_failure_policy(on_preemption),
        # A replacement Pod starts only once the old one has terminated, i.e. after its
        # SIGTERM checkpoint is written (the only value allowed with a podFailurePolicy).
        "podReplacementPolicy": "Failed",
        "template": {"metadata": {"labels": spec.labels()}, "spec": pod_spec},
    }


def _job(
    spec: JobSpec, pod_spec: Manifest, *, pods: int, backoff_limit: int, indexed: bool
) -> Manifest:
    """A Job that replaces a preempted Pod for free and a crashed one `backoff_limit` times."""
    job_spec = _job_spec(spec, pod_spec, pods, backoff_limit, on_preemption="Ignore")
    if not indexed:
        del job_spec["completionMode"]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": spec.metadata(), "spec": job_spec}


# The Job controller's messages for a FailJob rule (pkg/controller/job of Kubernetes):
#   "Pod <ns>/<pod> has condition DisruptionTarget matching FailJob rule at index 0"
#   "Container trainer for pod <ns>/<pod> failed with exit code 75 matching FailJob rule at ..."
# JobSet matches its rules' patterns (RE2, unanchored) against the failed Job's message.
PREEMPTED_MESSAGES = (
    "has condition DisruptionTarget matching FailJob rule",
    f"failed with exit code {EXIT_PREEMPTED} matching FailJob rule",
)
FATAL_MESSAGES = (
    f"failed with exit code ({EXIT_USER_ERROR}|{EXIT_DIVERGED}) matching FailJob rule",
)


def jobset_failure_policy(max_restarts: int) -> Manifest:
    """A preemption restarts the group for free, exit 2 or 3 fails it, else `max_restarts`."""
    return {
        "maxRestarts": max_restarts,
        # All old Pods (the chief writing its SIGTERM checkpoint among them) are gone before
        # the new ones start and read that checkpoint.
        "restartStrategy": "BlockingRecreate",
        "rules": [
            {
                "name": name,
                "action": action,
                "onJobFailureReasons": ["PodFailurePolicy"],
                "onJobFailureMessagePatterns": list(patterns),
            }
            for name, action, patterns in (
                ("Preempted", "RestartJobSetAndIgnoreMaxRestarts", PREEMPTED_MESSAGES),
                ("UserErrorOrDiverged", "FailJobSet", FATAL_MESSAGES),
            )
        ],
    }


def jobset_job_name(jobset_name: str) -> str:
    return f"{jobset_name}-{REPLICATED_JOB}-0"


def _jobset(spec: JobSpec, pod_spec: Manifest, *, pods: int, max_restarts: int) -> Manifest:
    """One Indexed Job of `pods` Pods restarted as a group; `network` makes its Service."""
    job_spec = _job_spec(spec, pod_spec, pods, backoff_limit=0, on_preemption="FailJob")
    return {
        "apiVersion": JOBSET_API_VERSION,
        "kind": "JobSet",
        "metadata": spec.metadata(),
        "spec": {
            "network": {
                "enableDNSHostnames": True,
                "publishNotReadyAddresses": True,
                "subdomain": spec.name,
            },
            "failurePolicy": jobset_failure_policy(max_restarts),
            "replicatedJobs": [
                {
                    "name": REPLICATED_JOB,
                    "replicas": 1,
                    "template": {"metadata": {"labels": spec.labels()}, "spec": job_spec},
                }
            ],
        },
    }


def tpu_job_manifests(
    spec: JobSpec, tpu: TpuSlice, backoff_limit: int = CRASH_RETRIES
) -> list[Manifest]:
    """A Job (single host) or a JobSet (multi host: every Pod must run at once) for one slice."""
    env = {"RL_STRATEGY": TPU_STRATEGY, "RL_TPU_TYPE": tpu.name, "RL_JOB_NAME": spec.name}
    env_list = _env({**env, "PYTHONUNBUFFERED": "1", **spec.env})
    pod: Manifest = {
        "restartPolicy": "Never",
        "nodeSelector": {
            "cloud.google.com/gke-tpu-accelerator": tpu.accelerator,
            "cloud.google.com/gke-tpu-topology": tpu.topology,
        },
        "terminationGracePeriodSeconds": termination_grace_seconds(spec.preemption_grace),
    }
    resources = {"google.com/tpu": str(tpu.chips_per_host)}
    if not tpu.multi_host:
        pod["containers"] = [_container(spec, env_list, resources)]
        return [_job(spec, pod, pods=1, backoff_limit=backoff_limit, indexed=False)]

    job = jobset_job_name(spec.name)
    hosts = ",".join(f"{job}-{i}.{spec.name}" for i in range(tpu.hosts))
    index = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    env_list += [
        {"name": "TPU_WORKER_ID", "valueFrom": {"fieldRef": {"fieldPath": index}}},
        {"name": "TPU_WORKER_HOSTNAMES", "value": hosts},
    ]
    container = _container(spec, env_list, resources)
    container["ports"] = [{"name": "tpu-runtime", "containerPort": TPU_RUNTIME_PORT}]
    pod["containers"] = [container]
    return [_jobset(spec, pod, pods=tpu.hosts, max_restarts=backoff_limit)]


def worker_job_manifests(
    spec: JobSpec,
    workers: int,
    gpus_per_worker: int = 0,
    gpu_type: str | None = None,
    backoff_limit: int = CRASH_RETRIES,
) -> list[Manifest]:
    """A headless Service + Indexed Job, or a JobSet for several workers (docs/tpu_gke.md)."""
    if workers < 1:
        raise UserError(f"workers must be >= 1, got {workers}")
    env = {
        "RL_STRATEGY": WORKER_STRATEGY,
        "RL_NUM_WORKERS": str(workers),
        "RL_JOB_NAME": spec.name if workers == 1 else jobset_job_name(spec.name),
        "RL_SERVICE": spec.name,
        "RL_WORKER_PORT": str(WORKER_PORT),
        "PYTHONUNBUFFERED": "1",
        **spec.env,
    }
    resources = {"nvidia.com/gpu": str(gpus_per_worker)} if gpus_per_worker else {}
    container = _container(spec, _env(env), resources)
    container["ports"] = [{"name": "tf-worker", "containerPort": WORKER_PORT}]
    pod: Manifest = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": termination_grace_seconds(spec.preemption_grace),
    }
    if gpu_type:
        pod["nodeSelector"] = {"cloud.google.com/gke-accelerator": gpu_type}
    pod["containers"] = [container]
    if workers > 1:
        return [_jobset(spec, pod, pods=workers, max_restarts=backoff_limit)]
    pod["subdomain"] = spec.name
    # TF_CONFIG needs an index even for one worker.
    job = _job(spec, pod, pods=workers, backoff_limit=backoff_limit, indexed=True)
    return [_headless_service(spec, WORKER_PORT, "tf-worker"), job]


# KubeRay (ray.io/v1 RayJob): the learner is the Ray job's entrypoint on the head Pod, the actors
# run on a CPU worker group that alone declares ACTOR_RESOURCE (docs/tpu_gke.md, "Ray actors").
RAYJOB_API_VERSION = "ray.io/v1"
# KubeRay refuses a longer RayJob name (its RayCluster is `<rayjob>-<5 chars>`, at most 53).
MAX_RAYJOB_NAME = 47
RAY_VERSION = "2.60.0"  # requirements.txt's pin, which the image installs
ACTOR_RESOURCE = "rl_actor"  # one per actor (train.py --actor_resources), CPUs-per-node per node
ACTOR_GROUP = "actors"
ACTOR_MEMORY_GIB = 1  # per actor slot: one Python + TensorFlow process on CPU
RAYJOB_TTL_S = 600  # the cluster (and `kubectl logs` of its head) stays after the job
# The head container's preStop hook: Ray SIGKILLs the learner once Ray stops, so before the
# kubelet's SIGTERM stops Ray the hook gives the learner SIGTERM (it checkpoints and exits 75) and
# waits for it to end. (`train[.]py` matches the learner's command line, not the hook's own.)
LEARNER = f"{WORKDIR}/train[.]py"
LEARNER_STOP = (
    f"for p in /proc/[0-9]*; do grep -qa '{LEARNER}' $p/cmdline 2>/dev/null && kill -TERM "
    f"${{p#/proc/}}; done; while grep -qa '{LEARNER}' /proc/[0-9]*/cmdline 2>/dev/null; "
    "do sleep 1; done"
)


def rayjob_manifest(
    spec: JobSpec,
    *,
    actor_nodes: int,
    actor_node_cpus: int,
    gpus: int = 0,
    gpu_type: str | None = None,
    backoff_limit: int = CRASH_RETRIES,
) -> Manifest:
    """A KubeRay RayJob: the learner on the head Pod, one actor per CPU of `actor_nodes` Pods. A
    failed Ray job (preempted or crashed) is retried `backoff_limit` times on a new RayCluster."""
    head, head_spec = _ray_head(spec, gpus, gpu_type)
    node = {"cpu": str(actor_node_cpus), "memory": f"{actor_node_cpus * ACTOR_MEMORY_GIB}Gi"}
    worker = {"name": "ray-worker", "resources": {"requests": node, "limits": dict(node)}}
    return {
        "apiVersion": RAYJOB_API_VERSION,
        "kind": "RayJob",
        "metadata": spec.metadata(),
        "spec": {
            # `exec`: the learner itself is the Ray job's process, which the hook finds.
            "entrypoint": "exec " + shlex.join(["python", f"{WORKDIR}/train.py", *spec.train_args]),
            "backoffLimit": backoff_limit,
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": RAYJOB_TTL_S,
            "rayClusterSpec": {
                "rayVersion": RAY_VERSION,
                "headGroupSpec": {
                    "rayStartParams": {"num-cpus": "0"},  # no actor or task on the learner
                    "template": _ray_pod(spec, head, **head_spec),
                },
                "workerGroupSpecs": [
                    {
                        "groupName": ACTOR_GROUP,
                        "replicas": actor_nodes,
                        "minReplicas": actor_nodes,
                        "maxReplicas": actor_nodes,
                        # Ray resources of each node (`ray start --resources`): only these
                        # nodes offer ACTOR_RESOURCE; their CPUs come from the CPU limit.
                        "resources": {ACTOR_RESOURCE: str(actor_node_cpus)},
                        "template": _ray_pod(spec, worker),
                    }
                ],
            },
        },
    }


def _ray_head(spec: JobSpec, gpus: int, gpu_type: str | None) -> tuple[Manifest, Manifest]:
    """The head Pod's container (the learner, stopped by its preStop hook) and Pod spec."""
    head: Manifest = {
        "name": "ray-head",  # KubeRay's command (`ray start --head`) runs in it
        "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", LEARNER_STOP]}}},
    }
    if gpus:
        head["resources"] = {key: {"nvidia.com/gpu": str(gpus)} for key in ("requests", "limits")}
    head_spec: Manifest = {
        "terminationGracePeriodSeconds": termination_grace_seconds(spec.preemption_grace)
    }
    if gpu_type:
        head_spec["nodeSelector"] = {"cloud.google.com/gke-accelerator": gpu_type}
    return head, head_spec


def _ray_pod(spec: JobSpec, container: Manifest, **pod_spec: Any) -> Manifest:
    """A Pod template of the RayCluster: `container` in the job's image, labels and env."""
    container = {
        "name": container["name"],
        "image": spec.image,
        "workingDir": WORKDIR,
        **container,
    }
    if spec.env:
        container["env"] = _env(spec.env)
    return {
        "metadata": {"labels": spec.labels()},
        "spec": {**pod_spec, "containers": [container]},
    }


def tuner_job_manifests(
    spec: JobSpec, workers: int, backoff_limit: int, secret: str | None = None
) -> list[Manifest]:
    """A Job of `workers` Optuna study workers; the password comes from `secret`'s `password`."""
    if workers < 1:
        raise UserError(f"workers must be >= 1, got {workers}")
    env = _env({"PYTHONUNBUFFERED": "1", **spec.env})
    if secret:
        reference = {"secretKeyRef": {"name": secret, "key": "password"}}
        env.append({"name": "OPTUNA_DB_PASSWORD", "valueFrom": reference})
    container = _container(spec, env, {}, command=("python", "-m", "rl.tune"))
    pod: Manifest = {"restartPolicy": "Never", "containers": [container]}
    # The workers are interchangeable: no index.
    return [_job(spec, pod, pods=workers, backoff_limit=backoff_limit, indexed=False)]


def to_yaml(manifests: list[Manifest]) -> str:
    """Multi-document YAML for `kubectl apply -f -`, keys in their natural order."""
    return yaml.safe_dump_all(manifests, sort_keys=False, default_flow_style=False)


# ----------------------------------------------------------------- examples checked into k8s/

EXAMPLE_ARGS = [
    "--sys=local",
    "--hparams=dqn_cartpole",
    "--output_dir=gs://BUCKET/runs/dqn_cartpole",
]


def example_manifests() -> dict[str, list[Manifest]]:
    """The examples in k8s/ by file name (fixed names, placeholder image/bucket)."""

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


if __name__ == "__main__":
    for file_name, manifests in example_manifests().items():
        path = Path(sys.argv[1] if len(sys.argv) > 1 else "k8s") / file_name
        path.write_text(example_text(file_name, manifests), encoding="utf-8")
        print(path)
