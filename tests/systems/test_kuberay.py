"""`train.py --sys gke --num_workers N` (Ray actors) end to end, in-process: a KubeRay RayJob
rendered, validated strictly against the vendored RayJob CRD schema (kuberay_crd/README.md), and
sent by the REAL `kubernetes` client to the recording API server. No cluster is involved: what a
KubeRay operator and Ray then do with the RayJob is not executed here (docs/tpu_gke.md).
"""

from __future__ import annotations

import copy
import os
import shlex
import signal
import subprocess
import sys
import time

import jsonschema
import kubernetes_validate
import pytest
import yaml
from kube_recorder import TOKEN, RecordingApiServer
from launcher_fixtures import (
    api_fixture,  # noqa: F401  (pytest fixture `api`)
    assert_refused,
    no_local_training_fixture,  # noqa: F401  (pytest fixture `no_local_training`)
    run_train,
)
from rayjob_schema import kuberay_refusals, validate_rayjob

from rl.cli import build_parser
from rl.systems.manifests import LEARNER_STOP

GPU_IMAGE = "europe-west4-docker.pkg.dev/my-project/rl/rl-gpu:2026-11-27"
OUTPUT_DIR = "gs://my-bucket/runs/apex"
BASE = ["--sys", "gke", "--hparams", "dqn_tiny", "--output_dir", OUTPUT_DIR, "--image", GPU_IMAGE]
ACTORS = [*BASE, "--num_workers", "6"]

pytestmark = pytest.mark.usefixtures("no_local_training")


def as_pod(template: dict, name: str) -> dict:
    """A Pod of the RayCluster, from its group's template, for kubernetes-validate."""
    metadata = {**template["metadata"], "name": name, "namespace": "team-rl"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}


def test_actors_post_a_rayjob(api, capsys):
    argv = [*ACTORS, "--actor_nodes", "2", "--actor_node_cpus", "3", "--gpus_per_worker", "1"]
    argv += ["--gpu_type", "nvidia-l4", "--namespace", "team-rl", "--max_actor_restarts", "10"]
    argv += ["--preemption_grace", "50", "--actor_wait_timeout", "900"]
    status, out, err = run_train(capsys, argv)
    assert status == 0, err
    assert err == []
    (request,) = api.requests
    assert (request.method, request.path) == ("POST", "/apis/ray.io/v1/namespaces/team-rl/rayjobs")
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json"
    rayjob = request.body
    validate_rayjob(rayjob)
    assert kuberay_refusals(rayjob) == []
    name = rayjob["metadata"]["name"]
    assert len(name) <= 47 and name[0].isalpha()  # KubeRay's limit for a RayJob name
    assert (
        f"submitted rayjob/{name} to namespace team-rl: a learner (1 x nvidia-l4), "
        "6 Ray actors on 2 x 3 CPUs"
    ) in out
    assert f"kubectl logs -f job/{name} -n team-rl" in out  # the submitter Job's log

    spec = rayjob["spec"]
    # Restarts: a failed Ray job (exit 75 after a preemption, or a crash) is retried on a new
    # RayCluster 3 times; the cluster goes 600 s after the end.
    assert spec["backoffLimit"] == 3
    assert spec["shutdownAfterJobFinishes"] is True and spec["ttlSecondsAfterFinished"] == 600
    # The entrypoint, split as the Ray job's shell splits it, is the learner's train.py with
    # the user's flags, which train.py's own parser reads back.
    words = shlex.split(spec["entrypoint"])
    assert words[:3] == ["exec", "python", "/app/train.py"]
    pod_args = build_parser().parse_args(words[3:])
    assert (pod_args.sys, pod_args.hparams, pod_args.output_dir) == (
        "local",
        "dqn_tiny",
        OUTPUT_DIR,
    )
    assert (pod_args.num_workers, pod_args.max_actor_restarts) == (6, 10)
    assert pod_args.actor_wait_timeout == 900
    assert pod_args.actor_resources == {"rl_actor": 1}
    assert pod_args.preemption_grace == 50 and pod_args.ray_address is None  # RAY_ADDRESS: Ray's
    assert not any(word.startswith(("--image", "--actor_node", "--gpu")) for word in words)

    cluster = spec["rayClusterSpec"]
    assert cluster["rayVersion"] == "2.60.0"
    head = cluster["headGroupSpec"]
    assert head["rayStartParams"] == {"num-cpus": "0"}  # actors never land on the learner
    head_pod = head["template"]["spec"]
    assert head_pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    assert head_pod["terminationGracePeriodSeconds"] == 55  # --preemption_grace + 5 s
    (head_container,) = head_pod["containers"]
    assert head_container["image"] == GPU_IMAGE
    assert head_container["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    assert head_container["lifecycle"]["preStop"]["exec"]["command"] == ["sh", "-c", LEARNER_STOP]
    (group,) = cluster["workerGroupSpecs"]
    assert group["groupName"] == "actors"
    assert group["replicas"] == group["minReplicas"] == group["maxReplicas"] == 2
    assert group["resources"] == {"rl_actor": "3"}  # 3 actor slots per node, 6 in all
    (worker,) = group["template"]["spec"]["containers"]
    assert worker["image"] == GPU_IMAGE
    assert worker["resources"]["limits"] == {"cpu": "3", "memory": "3Gi"}
    assert "nodeSelector" not in group["template"]["spec"]
    for template, pod in ((head["template"], "head"), (group["template"], "worker")):
        assert template["metadata"]["labels"]["app.kubernetes.io/instance"] == name
        kubernetes_validate.validate(as_pod(template, f"{name}-{pod}"), "1.37.0", strict=True)


def test_impala_on_cpu_with_default_actor_nodes(api, capsys):
    # 12 actors, min(12, 8) = 8 CPUs per node: 2 nodes; a CPU learner has no node selector.
    argv = ["--sys", "gke", "--hparams", "impala_tiny", "--output_dir", OUTPUT_DIR]
    argv += ["--image", GPU_IMAGE, "--num_workers", "12", "--job_name", "impala-12"]
    argv += ["--hparam_override", "num_envs=12"]
    status, out, err = run_train(capsys, argv)
    assert status == 0, err
    assert "submitted rayjob/impala-12 to namespace default: a learner (CPU only)" in out
    rayjob = api.requests[0].body
    validate_rayjob(rayjob)
    assert kuberay_refusals(rayjob) == []
    head_pod = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    assert "nodeSelector" not in head_pod and "resources" not in head_pod["containers"][0]
    (group,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert (group["replicas"], group["resources"]) == (2, {"rl_actor": "8"})


def test_dry_run_prints_a_rayjob_and_sends_nothing(api, capsys):
    status, out, err = run_train(capsys, [*ACTORS, "--dry_run"])
    assert status == 0 and err == [] and api.requests == []
    (rayjob,) = yaml.safe_load_all(out)
    validate_rayjob(rayjob)
    assert "rl_actor: '6'" in out  # a quantity: a string in the YAML text too
    assert "&id" not in out  # no YAML anchors: every template is its own


def test_a_cluster_without_kuberay_is_told_what_to_install(tmp_path, monkeypatch, capsys):
    with RecordingApiServer(
        status=404, fail_kinds=("RayJob",), reason="NotFound", message="not found"
    ) as server:
        monkeypatch.setenv("KUBECONFIG", str(server.write_kubeconfig(tmp_path / "kubeconfig")))
        status, out, err = run_train(capsys, [*ACTORS, "--job_name", "no-kuberay"])
    assert status == 2 and len(err) == 1, err
    assert "refused RayJob 'no-kuberay'" in err[0] and "404" in err[0]
    assert "KubeRay operator installed?" in err[0]
    assert [(r.method, r.path) for r in server.requests] == [
        ("POST", "/apis/ray.io/v1/namespaces/default/rayjobs")
    ]


BAD = {
    # id: (argv, key words of the one stderr line)
    "actor_nodes_without_actors": (
        [*BASE, "--actor_nodes", "2"],
        ["--actor_nodes and --actor_node_cpus", "need --num_workers N > 1"],
    ),
    "agent_without_actors": (
        ["--sys", "gke", "--hparams", "ppo_tiny", "--output_dir", OUTPUT_DIR, "--image", GPU_IMAGE]
        + ["--num_workers", "2"],
        ["renders Ray actors", "not agent ppo", "--num_workers 1"],
    ),
    "testing_with_actors": (
        [*ACTORS, "--training", "False"],
        ["renders Ray actors", "not --training False"],
    ),
    "too_few_actor_slots": (
        [*ACTORS, "--actor_nodes", "2", "--actor_node_cpus", "2"],
        ["--num_workers 6 actors need one CPU each", "give 4"],
    ),
    "zero_actor_cpus": ([*ACTORS, "--actor_node_cpus", "0"], ["must be >= 1", "and 0"]),
    "several_learner_pods": ([*ACTORS, "--workers", "2"], ["--workers 2", "one Pod"]),
    "ray_address": (
        [*ACTORS, "--ray_address", "10.0.0.5:6379"],
        ["--ray_address and --actor_resources", "leave them out"],
    ),
    "strategy": ([*ACTORS, "--strategy", "mirrored"], ["--strategy mirrored conflicts"]),
    "impala_envs_not_split": (
        ["--sys", "gke", "--hparams", "impala_tiny", "--output_dir", OUTPUT_DIR]
        + ["--image", GPU_IMAGE, "--num_workers", "3"],
        ["num_envs=4", "multiple of 3"],  # the learner's own check, run before sending
    ),
    "restarts_negative": ([*ACTORS, "--max_actor_restarts", "-1"], ["--max_actor_restarts"]),
    "wait_timeout_negative": ([*ACTORS, "--actor_wait_timeout", "-5"], ["--actor_wait_timeout"]),
    "long_name": ([*ACTORS, "--job_name", "a" * 48], ["--job_name", "at most 47"]),
    "tpu_actors": (
        ["--sys", "tpu", "--tpu", "v5e-4", "--hparams", "dqn_tiny", "--output_dir", OUTPUT_DIR]
        + ["--image", GPU_IMAGE, "--num_workers", "2"],
        ["--num_workers 2 with --sys tpu is not available yet", "--sys gke"],
    ),
    "actor_nodes_with_sys_local": (
        ["--hparams", "dqn_tiny", "--output_dir", "runs/x", "--actor_nodes", "1"],
        ["--actor_nodes only applies to --sys gke"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_mistakes_exit_2_with_one_line_and_send_nothing(case, api, capsys):
    argv, words = BAD[case]
    assert_refused(capsys, api, argv, words)


def _rayjob(capsys) -> dict:
    status, out, _ = run_train(capsys, [*ACTORS, "--dry_run"])
    assert status == 0
    return yaml.safe_load(out)


@pytest.mark.parametrize(
    "damage",
    ["unknown_spec_field", "unknown_group_field", "string_replicas", "no_group_name", "pod_typo"],
)
def test_rayjob_schema_validation_is_not_vacuous(damage, capsys):
    rayjob = _rayjob(capsys)
    validate_rayjob(rayjob)
    bad = copy.deepcopy(rayjob)
    group = bad["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    if damage == "unknown_spec_field":
        bad["spec"]["restartPolicy"] = "Always"
    elif damage == "unknown_group_field":
        group["replica"] = 2
    elif damage == "string_replicas":
        group["replicas"] = "2"
    elif damage == "no_group_name":
        del group["groupName"]
    elif damage == "pod_typo":
        group["template"]["spec"]["nodeselector"] = {"x": "y"}
    with pytest.raises(jsonschema.ValidationError):
        validate_rayjob(bad)


@pytest.mark.e2e
def test_the_head_hook_stops_the_learner_and_waits_for_its_checkpoint(tmp_path):
    # A stand-in learner whose command line holds /app/train.py: on SIGTERM it takes a moment
    # (its checkpoint), writes a file and exits 75. The hook must signal it and return only
    # once it has exited; a process without that path is left alone.
    done = tmp_path / "checkpointed"
    code = (
        "import signal, sys, time\n"
        "def stop(*_):\n"
        f"    time.sleep(1.0); open({str(done)!r}, 'w').write('x'); sys.exit(75)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    learner = subprocess.Popen(
        [sys.executable, "-c", code, "/app/train.py"], stdout=subprocess.PIPE, text=True
    )
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert learner.stdout.readline() == "ready\n"
        started = time.monotonic()
        subprocess.run(["sh", "-c", LEARNER_STOP], check=True, timeout=30)
        assert time.monotonic() - started >= 1.0  # it waited for the checkpoint
        assert done.exists()
        assert learner.wait(timeout=5) == 75
        assert bystander.poll() is None
    finally:
        for process in (learner, bystander):
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()


def test_the_operator_checks_are_not_vacuous(capsys):
    # Each damage passes the CRD schema but not the operator's Go validation (restated).
    rayjob = _rayjob(capsys)
    assert kuberay_refusals(rayjob) == []
    for damage in ("rayStartParams", "no_shutdown", "crossed_replicas", "long_name"):
        bad = copy.deepcopy(rayjob)
        group = bad["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
        if damage == "rayStartParams":  # the custom resource declared twice
            group["rayStartParams"] = {"num-cpus": "6"}
        elif damage == "no_shutdown":
            bad["spec"]["shutdownAfterJobFinishes"] = False
        elif damage == "crossed_replicas":
            group["minReplicas"] = 3
        elif damage == "long_name":
            bad["metadata"]["name"] = "a" * 48
        validate_rayjob(bad)
        assert len(kuberay_refusals(bad)) == 1, damage
