"""`python train.py --sys tpu ...` end to end, in-process, against a recording API server.

The REAL `kubernetes` client sends the requests: a generated kubeconfig points it at
`kube_recorder.RecordingApiServer` on 127.0.0.1, which records method, path, headers and body.
No Kubernetes cluster is involved; what a real API server and GKE would do with these requests
is checked only on paper (docs/tpu_gke.md says so).
"""

from __future__ import annotations

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

from rl.cli import build_parser
from rl.systems.kube_launcher import LAUNCH_FLAGS, pod_train_args

IMAGE = "us-docker.pkg.dev/my-project/rl/rl-tpu:2026-11-21"
OUTPUT_DIR = "gs://my-bucket/runs/dqn"
BASE = ["--sys", "tpu", "--hparams", "dqn_tiny", "--output_dir", OUTPUT_DIR, "--image", IMAGE]

pytestmark = pytest.mark.usefixtures("no_local_training")


def test_single_host_job_is_posted(api, capsys):
    argv = [*BASE, "--tpu", "v5e-4", "--namespace", "team-rl", "--kube_context", "recorder"]
    argv += ["--hparam_override", "lr=0.01,hidden_sizes=[16,16]", "--seed", "7"]
    status, out, err = run_train(capsys, argv)
    assert status == 0, err
    assert err == []
    name = re.search(r"submitted job/(\S+) ", out).group(1)
    assert re.fullmatch(r"rl-dqn-tiny-\d{8}-\d{6}-[a-z0-9]{4}", name)
    assert f"kubectl logs -f job/{name} -n team-rl --context recorder" in out

    (request,) = api.requests
    assert (request.method, request.path) == ("POST", "/apis/batch/v1/namespaces/team-rl/jobs")
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json"
    job = request.body
    assert job["apiVersion"] == "batch/v1" and job["kind"] == "Job"
    assert job["metadata"]["name"] == name and job["metadata"]["namespace"] == "team-rl"
    assert job["metadata"]["labels"]["app.kubernetes.io/instance"] == name
    assert job["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/instance"] == name
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "2x2",
    }
    (container,) = pod_containers(job)
    # Quantities travel as JSON strings, never numbers.
    assert container["resources"] == {
        "requests": {"google.com/tpu": "4"},
        "limits": {"google.com/tpu": "4"},
    }
    assert container["image"] == IMAGE
    assert container["args"] == [
        "--sys=local",
        "--hparams=dqn_tiny",
        "--hparam_override=lr=0.01,hidden_sizes=[16,16]",
        f"--output_dir={OUTPUT_DIR}",
        "--seed=7",
    ]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["RL_STRATEGY"] == "tpu" and env["RL_JOB_NAME"] == name
    # A preemption does not use up backoffLimit; SIGKILL comes after train.py's own grace.
    assert [r["action"] for r in job["spec"]["podFailurePolicy"]["rules"]] == [
        "Ignore",
        "Ignore",
        "FailJob",
    ]
    assert job["spec"]["backoffLimit"] == 3 and pod["restartPolicy"] == "Never"
    assert pod["terminationGracePeriodSeconds"] == 30
    kubernetes_validate.validate(job, "1.30.0", strict=True)


def test_multi_host_posts_a_jobset(api, capsys):
    argv = [*BASE, "--tpu", "v5p-32", "--experimental_multihost", "--job_name", "my-run-1"]
    argv += ["--preemption_grace", "12.5"]
    status, out, err = run_train(capsys, argv)
    assert status == 0, err
    assert "submitted jobset/my-run-1 to namespace default: v5p-32" in out
    (request,) = api.requests
    assert (request.method, request.path) == (
        "POST",
        "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets",
    )
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json"
    jobset = request.body
    validate_jobset(jobset)
    assert jobset["metadata"]["name"] == jobset["spec"]["network"]["subdomain"] == "my-run-1"
    assert jobset["spec"]["failurePolicy"]["restartStrategy"] == "BlockingRecreate"
    (job,) = child_jobs(jobset)
    kubernetes_validate.validate(job, "1.37.0", strict=True)
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["completions"] == 4
    assert job["spec"]["backoffLimit"] == 0
    pod = job["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 18  # ceil(12.5) + 5
    (container,) = pod_containers(job)
    assert "--preemption_grace=12.5" in container["args"]
    assert container["resources"]["limits"] == {"google.com/tpu": "4"}
    env = {e["name"]: e for e in container["env"]}
    assert env["TPU_WORKER_HOSTNAMES"]["value"] == ",".join(
        f"my-run-1-workers-0-{i}.my-run-1" for i in range(4)
    )
    assert "-l app.kubernetes.io/instance=my-run-1" in out


def test_refused_job_is_one_line(tmp_path, monkeypatch, capsys):
    with RecordingApiServer(status=409, fail_kinds=("Job",)) as api:
        monkeypatch.setenv("KUBECONFIG", str(api.write_kubeconfig(tmp_path / "kubeconfig")))
        argv = [*BASE, "--tpu", "v6e-8", "--job_name", "taken"]
        status, out, err = run_train(capsys, argv)
    assert status == 2 and len(err) == 1, err
    assert "409" in err[0] and "AlreadyExists" in err[0] and "'taken'" in err[0]
    assert [(r.method, r.path) for r in api.requests] == [
        ("POST", "/apis/batch/v1/namespaces/default/jobs"),
    ]


def test_refused_jobset_is_one_line(tmp_path, monkeypatch, capsys):
    with RecordingApiServer(
        status=409,
        fail_kinds=("JobSet",),
        message='jobsets.jobset.x-k8s.io "taken" already exists',
    ) as api:
        monkeypatch.setenv("KUBECONFIG", str(api.write_kubeconfig(tmp_path / "kubeconfig")))
        argv = [*BASE, "--tpu", "v6e-16", "--experimental_multihost", "--job_name", "taken"]
        status, out, err = run_train(capsys, argv)
    assert status == 2 and len(err) == 1, err
    assert "refused JobSet 'taken'" in err[0] and "409" in err[0] and "already exists" in err[0]
    assert "JobSet controller" not in err[0]  # the hint is for a 404 only
    assert [(r.method, r.path) for r in api.requests] == [
        ("POST", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets"),
    ]


def test_unreachable_api_is_one_line(tmp_path, monkeypatch, capsys):
    server = RecordingApiServer()
    path = server.write_kubeconfig(tmp_path / "kubeconfig")  # never started: nothing listens
    server.close_unstarted()
    monkeypatch.setenv("KUBECONFIG", str(path))
    status, out, err = run_train(capsys, [*BASE, "--tpu", "v5e-4"])
    assert status == 2 and len(err) == 1, err
    assert "cannot reach the Kubernetes API" in err[0]


def test_dry_run_prints_yaml_and_sends_nothing(api, capsys):
    argv = [*BASE, "--tpu", "v4-32", "--experimental_multihost", "--dry_run", "--namespace", "ns"]
    status, out, err = run_train(capsys, argv)
    assert status == 0 and err == []
    assert api.requests == []
    (jobset,) = yaml.safe_load_all(out)
    assert jobset["kind"] == "JobSet" and jobset["metadata"]["namespace"] == "ns"
    validate_jobset(jobset)
    for job in child_jobs(jobset):
        kubernetes_validate.validate(job, "1.30.0", strict=True)
    # The quantity is a quoted string in the YAML text itself.
    assert "google.com/tpu: '4'" in out


def test_dry_run_needs_no_kubeconfig(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    status, out, err = run_train(capsys, [*BASE, "--tpu", "v5e-1", "--dry_run"])
    assert status == 0 and err == []
    (job,) = yaml.safe_load_all(out)
    assert pod_containers(job)[0]["resources"]["limits"] == {"google.com/tpu": "1"}


BAD = {
    # id: (argv, key words of the one stderr line)
    "no_tpu": (BASE, ["--sys tpu needs --tpu", "v5e-4", "--sys local"]),
    "bad_tpu": ([*BASE, "--tpu", "v5e-5"], ["'v5e-5'", "did you mean", "v5e-4"]),
    "bad_topology": ([*BASE, "--tpu", "v5e-4:2x4"], ["topology '2x4'", "v5e-4:2x2"]),
    "multihost_flag_missing": ([*BASE, "--tpu", "v5e-16"], ["--experimental_multihost"]),
    "no_image": (
        ["--sys", "tpu", "--tpu", "v5e-4", "--hparams", "dqn_tiny", "--output_dir", OUTPUT_DIR],
        ["--image", "k8s/Dockerfile.tpu"],
    ),
    "bad_image": ([*BASE, "--tpu", "v5e-4", "--image", "Bad Image"], ["--image", "'Bad Image'"]),
    "bad_namespace": ([*BASE, "--tpu", "v5e-4", "--namespace", "Team_RL"], ["--namespace"]),
    "bad_job_name": ([*BASE, "--tpu", "v5e-4", "--job_name", "x" * 53], ["--job_name"]),
    # v5e-16: 4 hosts, Pod names `<name>-workers-0-3-<5 chars>` must fit in 63.
    "multihost_job_name_too_long": (
        [*BASE, "--tpu", "v5e-16", "--experimental_multihost", "--job_name", "x" * 46],
        ["--job_name", "at most 45"],
    ),
    "negative_grace": (
        [*BASE, "--tpu", "v5e-4", "--preemption_grace", "-5"],
        ["--preemption_grace must be > 0", "got -5"],
    ),
    "local_output_dir": (
        [*BASE[:-4], "--output_dir", "runs/x", "--image", IMAGE, "--tpu", "v5e-4"],
        ["gs://", "'runs/x'"],
    ),
    "bad_bucket": (
        [*BASE[:-4], "--output_dir", "gs://B/x", "--image", IMAGE, "--tpu", "v5e-4"],
        ["gs://", "bucket"],
    ),
    "unknown_context": (
        [*BASE, "--tpu", "v5e-4", "--kube_context", "recordr"],
        ["--kube_context 'recordr'", "did you mean 'recorder'"],
    ),
    "unknown_hparams": (
        [*BASE[:2], "--hparams", "dqn_tinny", *BASE[4:], "--tpu", "v5e-4"],
        ["unknown hparams set", "'dqn_tiny'"],
    ),
    "bad_override": (
        [*BASE, "--tpu", "v5e-4", "--hparam_override", "gama=0.9"],
        ["unknown hparam 'gama'", "'gamma'"],
    ),
    "bad_value": ([*BASE, "--tpu", "v5e-4", "--train_steps", "0"], ["train_steps", ">= 1"]),
    "conflicting_strategy": (
        [*BASE, "--tpu", "v5e-4", "--strategy", "multi_worker_mirrored"],
        ["--strategy multi_worker_mirrored conflicts with --sys tpu", "'tpu'"],
    ),
    "image_with_sys_local": (
        ["--hparams", "dqn_tiny", "--output_dir", "runs/x", "--image", IMAGE],
        ["--image only applies to --sys tpu or --sys gke (got --sys local)"],
    ),
    "dry_run_with_sys_local": (
        ["--hparams", "dqn_tiny", "--output_dir", "runs/x", "--dry_run"],
        ["--dry_run only applies to --sys tpu or --sys gke"],
    ),
    "tpu_with_sys_local": (
        ["--hparams", "dqn_tiny", "--output_dir", "runs/x", "--tpu", "v5e-4"],
        ["--tpu only applies to --sys tpu (got --sys local)"],
    ),
    "gke_flag_with_sys_tpu": (
        [*BASE, "--tpu", "v5e-4", "--workers", "2"],
        ["--workers only applies to --sys gke (got --sys tpu)"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_mistakes_exit_2_with_one_line_and_send_nothing(case, api, capsys, tmp_path):
    argv, words = BAD[case]
    assert_refused(capsys, api, argv, words)


def test_pod_args_round_trip():
    """The Pod's train.py parses its args back to the user's values, minus the launch flags."""
    parser = build_parser()
    argv = [*BASE, "--tpu", "v5e-4", "--copies", "2", "--training", "False", "--render"]
    argv += ["--workers", "3", "--gpus_per_worker", "1", "--gpu_type", "nvidia-l4"]
    argv += ["--hparam_override", "lr=0.1,hidden_sizes=[8,8]", "--env", "CartPole-v0"]
    args = parser.parse_args(argv)
    pod_args = pod_train_args(args, parser)
    assert not any(a.startswith(f"--{flag}") for a in pod_args for flag in LAUNCH_FLAGS)
    again = vars(parser.parse_args(pod_args))
    expected = dict(vars(args), sys="local", **{flag: again[flag] for flag in LAUNCH_FLAGS})
    assert again == expected
