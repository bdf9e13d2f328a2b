"""`python train.py --sys gke ...` end to end, in-process, against a recording API server.

As for `--sys tpu`, the REAL `kubernetes` client sends the requests (a generated kubeconfig
points it at `kube_recorder.RecordingApiServer` on 127.0.0.1); the tests check method, path,
headers and JSON body, that the bodies pass the official schemas in strict mode (a JobSet: the
vendored JobSet CRD schema, its child Job kubernetes-validate), and that the environment each
Pod gets turns into the right TF_CONFIG. No cluster is involved.
"""

from __future__ import annotations

import json
import re

import kubernetes_validate
import pytest
import yaml
from jobset_schema import child_jobs, validate_jobset
from kube_recorder import TOKEN, RecordingApiServer
from launcher_fixtures import (
    api_fixture,  # noqa: F401  (pytest fixture `api`)
    assert_refused,
    no_local_training_fixture,  # noqa: F401  (pytest fixture `no_local_training`)
    pod_containers,
    run_train,
)

from rl.distribute.tf_config import install_tf_config

CPU_IMAGE = "us-docker.pkg.dev/my-project/rl/rl-cpu:2026-11-21"
GPU_IMAGE = "europe-west4-docker.pkg.dev/my-project/rl/rl-gpu@sha256:" + "ab" * 32
OUTPUT_DIR = "gs://my-bucket/runs/ppo"
BASE = ["--sys", "gke", "--hparams", "dqn_tiny", "--output_dir", OUTPUT_DIR]
K8S_VERSIONS = ["1.30.0", "1.37.0"]

pytestmark = pytest.mark.usefixtures("no_local_training")


def pod_env(job: dict, index: int) -> dict[str, str]:
    """The environment Pod `index` sees: the manifest's env plus what the Job controller adds."""
    (container,) = pod_containers(job)
    env = {e["name"]: e["value"] for e in container["env"]}
    env["JOB_COMPLETION_INDEX"] = str(index)
    return env


def test_cpu_workers_post_a_jobset(api, capsys):
    argv = [*BASE, "--image", CPU_IMAGE, "--workers", "3", "--namespace", "team-rl"]
    argv += ["--kube_context", "recorder", "--hparam_override", "lr=0.01", "--seed", "5"]
    status, out, err = run_train(capsys, argv)
    assert status == 0, err
    assert err == []
    name = re.search(r"submitted jobset/(\S+) to namespace team-rl: 3 workers \(CPU only\)", out)
    name = name[1]
    # A JobSet name leaves room for `-workers-0-<index>-<5 chars>` in its Pods' names.
    assert re.fullmatch(r"rl-dqn-tiny-\d{8}-\d{6}-[a-z0-9]{4}", name)
    assert (
        f"kubectl logs -f -n team-rl --context recorder --prefix --max-log-requests 3 "
        f"-l app.kubernetes.io/instance={name}"
    ) in out

    # One request: the JobSet controller creates the headless Service and the Job.
    (request,) = api.requests
    assert (request.method, request.path) == (
        "POST",
        "/apis/jobset.x-k8s.io/v1alpha2/namespaces/team-rl/jobsets",
    )
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json"
    jobset = request.body
    validate_jobset(jobset)
    (job,) = child_jobs(jobset)
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(job, version, strict=True)

    # One generated name everywhere: JobSet, Service (subdomain), labels, env.
    assert jobset["apiVersion"] == "jobset.x-k8s.io/v1alpha2" and jobset["kind"] == "JobSet"
    assert jobset["metadata"]["name"] == name and jobset["metadata"]["namespace"] == "team-rl"
    assert jobset["spec"]["network"]["subdomain"] == name
    assert jobset["spec"]["network"]["enableDNSHostnames"] is True
    assert job["metadata"]["name"] == f"{name}-workers-0"
    assert job["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/instance"] == name
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never" and pod["terminationGracePeriodSeconds"] == 30
    assert "nodeSelector" not in pod
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 3
    # One lost worker fails the child Job at once; the JobSet restarts all three.
    assert job["spec"]["backoffLimit"] == 0
    policy = jobset["spec"]["failurePolicy"]
    assert policy["maxRestarts"] == 3 and policy["restartStrategy"] == "BlockingRecreate"
    assert [(r["name"], r["action"]) for r in policy["rules"]] == [
        ("Preempted", "RestartJobSetAndIgnoreMaxRestarts"),
        ("UserErrorOrDiverged", "FailJobSet"),
    ]
    (container,) = pod_containers(job)
    assert container["image"] == CPU_IMAGE
    assert "resources" not in container  # CPU workers request no GPU
    assert container["ports"] == [{"name": "tf-worker", "containerPort": 2222}]
    assert container["command"] == ["python", "train.py"]
    assert container["args"] == [
        "--sys=local",
        "--hparams=dqn_tiny",
        "--hparam_override=lr=0.01",
        f"--output_dir={OUTPUT_DIR}",
        "--seed=5",
    ]
    env = pod_env(job, 0)
    assert env["RL_STRATEGY"] == "multi_worker_mirrored"
    assert env["RL_NUM_WORKERS"] == "3" and env["RL_JOB_NAME"] == f"{name}-workers-0"
    assert env["RL_SERVICE"] == name

    # What each Pod's trainer process builds from that environment, by hand: Pod i of Job
    # `<name>-workers-0` has hostname `<name>-workers-0-<i>` in subdomain `<name>`.
    workers = [f"{name}-workers-0-{i}.{name}:2222" for i in range(3)]
    for index in range(3):
        environ = pod_env(job, index)
        install_tf_config(environ)
        assert json.loads(environ["TF_CONFIG"]) == {
            "cluster": {"worker": workers},
            "task": {"type": "worker", "index": index},
        }


def test_gpu_workers_request_gpus_and_select_the_type(api, capsys):
    argv = [*BASE, "--image", GPU_IMAGE, "--workers", "2", "--gpus_per_worker", "4"]
    argv += ["--gpu_type", "nvidia-tesla-t4", "--job_name", "gpu-run-7"]
    status, out, err = run_train(capsys, argv)
    assert status == 0, err
    assert (
        "submitted jobset/gpu-run-7 to namespace default: 2 workers (4 x nvidia-tesla-t4 each)"
        in out
    )
    (request,) = api.requests
    assert request.path == "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets"
    validate_jobset(request.body)
    (job,) = child_jobs(request.body)
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}
    (container,) = pod_containers(job)
    assert container["image"] == GPU_IMAGE
    # The quantity travels as a JSON string, never a number.
    assert container["resources"] == {
        "requests": {"nvidia.com/gpu": "4"},
        "limits": {"nvidia.com/gpu": "4"},
    }
    kubernetes_validate.validate(job, K8S_VERSIONS[0], strict=True)


def test_one_worker_is_replaced_on_failure(api, capsys):
    # The default: one worker, a Job that replaces a failed Pod (which resumes from gs://).
    argv = [*BASE, "--image", CPU_IMAGE, "--preemption_grace", "40"]
    status, out, err = run_train(capsys, argv)
    assert status == 0, err
    name = re.search(r"submitted job/(\S+) to namespace default: 1 worker \(CPU only\)", out)[1]
    assert f"kubectl logs -f job/{name} -n default" in out
    service_request, job_request = api.requests
    assert service_request.path == "/api/v1/namespaces/default/services"
    assert job_request.path == "/apis/batch/v1/namespaces/default/jobs"
    job = job_request.body
    kubernetes_validate.validate(job, K8S_VERSIONS[-1], strict=True)
    assert job["spec"]["backoffLimit"] == 3
    # Preemptions (DisruptionTarget, exit 75) are ignored, exits 2 and 3 fail the Job.
    rules = job["spec"]["podFailurePolicy"]["rules"]
    assert [r["action"] for r in rules] == ["Ignore", "Ignore", "FailJob"]
    assert rules[1]["onExitCodes"]["values"] == [75] and rules[2]["onExitCodes"]["values"] == [2, 3]
    # SIGKILL comes 5 s after the Pod's own --preemption_grace, which it is given.
    pod = job["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 45
    assert "--preemption_grace=40.0" in pod["containers"][0]["args"]
    assert job["spec"]["completions"] == 1 and job["spec"]["completionMode"] == "Indexed"
    environ = pod_env(job, 0)
    install_tf_config(environ)
    assert json.loads(environ["TF_CONFIG"])["cluster"]["worker"] == [f"{name}-0.{name}:2222"]


def test_refused_job_is_one_line_and_the_service_is_removed(tmp_path, monkeypatch, capsys):
    with RecordingApiServer(status=403, fail_kinds=("Job",)) as server:
        monkeypatch.setenv("KUBECONFIG", str(server.write_kubeconfig(tmp_path / "kubeconfig")))
        argv = [*BASE, "--image", CPU_IMAGE, "--workers", "1", "--job_name", "denied"]
        status, out, err = run_train(capsys, argv)
    assert status == 2 and len(err) == 1, err
    assert "refused Job 'denied'" in err[0] and "403" in err[0]
    assert [(r.method, r.path) for r in server.requests] == [
        ("POST", "/api/v1/namespaces/default/services"),
        ("POST", "/apis/batch/v1/namespaces/default/jobs"),
        ("DELETE", "/api/v1/namespaces/default/services/denied"),
    ]


def test_a_cluster_without_jobset_is_told_what_to_install(tmp_path, monkeypatch, capsys):
    # An API server without the JobSet CRD answers 404 for its resource path.
    with RecordingApiServer(
        status=404,
        fail_kinds=("JobSet",),
        reason="NotFound",
        message="the server could not find the requested resource",
    ) as server:
        monkeypatch.setenv("KUBECONFIG", str(server.write_kubeconfig(tmp_path / "kubeconfig")))
        argv = [*BASE, "--image", CPU_IMAGE, "--workers", "2", "--job_name", "no-jobset"]
        status, out, err = run_train(capsys, argv)
    assert status == 2 and len(err) == 1, err
    assert "refused JobSet 'no-jobset'" in err[0] and "404" in err[0]
    assert "JobSet controller installed?" in err[0]
    assert "jobset/releases/download/v0.12.0/manifests.yaml" in err[0]
    assert [(r.method, r.path) for r in server.requests] == [
        ("POST", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets"),
    ]
    assert out == ""


def test_dry_run_prints_yaml_that_parses_and_sends_nothing(api, capsys):
    argv = [*BASE, "--image", GPU_IMAGE, "--workers", "4", "--gpus_per_worker", "1"]
    argv += ["--namespace", "ns", "--dry_run"]
    status, out, err = run_train(capsys, argv)
    assert status == 0 and err == []
    assert api.requests == []
    (jobset,) = yaml.safe_load_all(out)
    assert jobset["kind"] == "JobSet" and jobset["metadata"]["namespace"] == "ns"
    validate_jobset(jobset)
    (job,) = child_jobs(jobset)
    assert job["spec"]["completions"] == 4
    kubernetes_validate.validate(job, K8S_VERSIONS[-1], strict=True)
    assert "nvidia.com/gpu: '1'" in out  # quoted in the YAML text itself
    assert "nodeSelector" not in out  # no --gpu_type: any GPU node pool


def test_dry_run_needs_no_kubeconfig(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    status, out, err = run_train(capsys, [*BASE, "--image", CPU_IMAGE, "--dry_run"])
    assert status == 0 and err == []
    assert [d["kind"] for d in yaml.safe_load_all(out)] == ["Service", "Job"]


def test_missing_kubeconfig_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    status, out, err = run_train(capsys, [*BASE, "--image", CPU_IMAGE])
    assert status == 2 and len(err) == 1, err
    assert "cannot read a kubeconfig" in err[0] and "--dry_run" in err[0]


IMAGE = ["--image", CPU_IMAGE]
BAD = {
    # id: (argv, key words of the one stderr line)
    "no_image": (BASE, ["--sys gke needs --image", "k8s/Dockerfile.cpu"]),
    "no_image_gpu": ([*BASE, "--gpus_per_worker", "1"], ["--image", "k8s/Dockerfile.gpu"]),
    "bad_image": ([*BASE, "--image", "rl:"], ["--image 'rl:'", "image reference"]),
    "zero_workers": ([*BASE, *IMAGE, "--workers", "0"], ["--workers", "between 1", "got 0"]),
    "too_many_workers": ([*BASE, *IMAGE, "--workers", "100001"], ["--workers", "100000"]),
    "workers_not_int": ([*BASE, *IMAGE, "--workers", "two"], ["--workers", "'two'"]),
    "negative_gpus": ([*BASE, *IMAGE, "--gpus_per_worker", "-1"], ["--gpus_per_worker", "-1"]),
    "too_many_gpus": ([*BASE, *IMAGE, "--gpus_per_worker", "17"], ["--gpus_per_worker", "16"]),
    "gpu_type_without_gpus": (
        [*BASE, *IMAGE, "--gpu_type", "nvidia-l4"],
        ["--gpu_type nvidia-l4", "--gpus_per_worker >= 1"],
    ),
    "bad_gpu_type": (
        [*BASE, *IMAGE, "--gpus_per_worker", "1", "--gpu_type", "nvidia-l40"],
        ["--gpu_type 'nvidia-l40'", "did you mean 'nvidia-l4'", "valid:"],
    ),
    "bad_namespace": ([*BASE, *IMAGE, "--namespace", "Team_RL"], ["--namespace 'Team_RL'"]),
    "bad_job_name": ([*BASE, *IMAGE, "--job_name", "My-Run"], ["--job_name 'My-Run'"]),
    "jobset_name_starts_with_digit": (
        [*BASE, *IMAGE, "--workers", "2", "--job_name", "7run"],
        ["--job_name '7run'", "starting with a letter"],
    ),
    "jobset_name_too_long": (
        [*BASE, *IMAGE, "--workers", "2", "--job_name", "a" * 46],
        ["--job_name", "at most 45"],
    ),
    "zero_grace": (
        [*BASE, *IMAGE, "--preemption_grace", "0"],
        ["--preemption_grace must be > 0", "got 0"],  # train.py's own check
    ),
    "nan_grace": ([*BASE, *IMAGE, "--preemption_grace", "nan"], ["--preemption_grace", "nan"]),
    "huge_grace": (
        [*BASE, *IMAGE, "--preemption_grace", "1e9"],
        ["--preemption_grace", "at most 3600"],
    ),
    "local_output_dir": (
        ["--sys", "gke", "--hparams", "dqn_tiny", "--output_dir", "runs/x", *IMAGE],
        ["--sys gke needs a gs:// --output_dir", "'runs/x'"],
    ),
    "no_output_dir": (["--sys", "gke", "--hparams", "dqn_tiny", *IMAGE], ["--output_dir"]),
    "unknown_hparams": (
        ["--sys", "gke", "--hparams", "dqn_tinny", "--output_dir", OUTPUT_DIR, *IMAGE],
        ["unknown hparams set", "'dqn_tiny'"],
    ),
    "bad_override": (
        [*BASE, *IMAGE, "--hparam_override", "lr=fast"],
        ["lr", "'fast'"],
    ),
    "unknown_context": (
        [*BASE, *IMAGE, "--kube_context", "elsewhere2"],
        ["--kube_context 'elsewhere2'", "did you mean 'elsewhere'"],
    ),
    "ray_address": (
        [*BASE, *IMAGE, "--ray_address", "10.0.0.5:6379"],
        ["--ray_address and --actor_resources", "makes the cluster", "leave them out"],
    ),
    "render": (
        [*BASE, *IMAGE, "--training", "False", "--render"],
        ["--render", "no display", "--record_video True"],
    ),
    "conflicting_strategy": (
        [*BASE, *IMAGE, "--strategy", "mirrored"],
        ["--strategy mirrored conflicts with --sys gke", "'multi_worker_mirrored'"],
    ),
    "compiled_env": (
        ["--sys", "gke", "--hparams", "ppo_tf_tiny", "--output_dir", OUTPUT_DIR, *IMAGE],
        ["compiled trainer (tf/ envs)", "'multi_worker_mirrored'", "--sys local"],
    ),
    "tpu_flag_with_sys_gke": (
        [*BASE, *IMAGE, "--tpu", "v5e-4"],
        ["--tpu only applies to --sys tpu (got --sys gke)"],
    ),
    "workers_with_sys_local": (
        ["--hparams", "dqn_tiny", "--output_dir", "runs/x", "--workers", "2"],
        ["--workers only applies to --sys gke (got --sys local)"],
    ),
    "gpus_with_sys_local": (
        ["--hparams", "dqn_tiny", "--output_dir", "runs/x", "--gpus_per_worker", "1"],
        ["--gpus_per_worker only applies to --sys gke"],
    ),
}


def test_agent_without_strategy_support_is_refused_before_sending(api, capsys, monkeypatch):
    # The Pod's train.py would refuse it at start; the launcher refuses it here instead.
    from rl.agents.dqn import DQN

    monkeypatch.setattr(DQN, "supports_strategies", False)
    status, out, err = run_train(capsys, [*BASE, *IMAGE, "--workers", "2"])
    assert status == 2 and len(err) == 1, err
    assert "agent DQN does not run under strategy 'multi_worker_mirrored'" in err[0]
    assert api.requests == [] and out == ""
    # Testing a checkpoint (--training False) runs on one device: no strategy needed.
    status, out, err = run_train(capsys, [*BASE, *IMAGE, "--training", "False", "--dry_run"])
    assert status == 0, err


@pytest.mark.parametrize("case", sorted(BAD))
def test_mistakes_exit_2_with_one_line_and_send_nothing(case, api, capsys, tmp_path):
    argv, words = BAD[case]
    assert_refused(capsys, api, argv, words)
