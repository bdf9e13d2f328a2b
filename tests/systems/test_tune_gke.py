# ruff: noqa: E501  (the table of cases reads best one case a line)
"""`python -m rl.tune ... --sys gke --workers N --storage URL` against the recording API server:
the REAL `kubernetes` client posts one Job of N worker Pods, each running the same tuner command
with `--sys=local --select=False`, valid under the official schemas; every mistake is one line,
exit 2, nothing sent."""

from __future__ import annotations

import re

import kubernetes_validate
import pytest
import yaml
from launcher_fixtures import (
    api_fixture,  # noqa: F401  (pytest fixture `api`)
    no_local_training_fixture,  # noqa: F401  (pytest fixture `no_local_training`)
    pod_containers,
)

from rl.tune import cli

IMAGE = "us-docker.pkg.dev/my-project/rl/rl-cpu:2026-11-21"
STORAGE = "postgresql://optuna:$(OPTUNA_DB_PASSWORD)@optuna-db.tuning.svc/optuna"
BASE = ["--sys", "gke", "--hparams", "ppo_tiny", "--space", "ppo", "--trials", "40"]
BASE += ["--last_k", "1", "--output_dir", "gs://my-bucket/tunes/ppo_tiny"]
K8S_VERSIONS = ["1.30.0", "1.37.0"]

pytestmark = pytest.mark.usefixtures("no_local_training")


def run_tune(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_workers_are_one_job_of_n_pods(api, capsys):
    argv = [*BASE, "--storage", STORAGE, "--workers", "3", "--image", IMAGE]
    argv += ["--storage_secret", "optuna-db"]
    argv += ["--namespace", "tuning", "--kube_context", "recorder", "--seeds_per_trial", "3"]
    status, out, err = run_tune(capsys, argv)
    assert status == 0, err
    assert err == ""
    name = re.search(r"submitted job/(\S+) to namespace tuning: 3 tuner workers of one study", out)
    assert re.fullmatch(r"rl-tune-ppo-tiny-\d{8}-\d{6}-[a-z0-9]{4}", name[1])
    (request,) = api.requests  # one Job, no Service: the workers share only the database
    assert (request.method, request.path) == ("POST", "/apis/batch/v1/namespaces/tuning/jobs")
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(request.body, version, strict=True)
    job = request.body
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 3
    assert "completionMode" not in job["spec"]  # interchangeable workers
    assert job["spec"]["backoffLimit"] == 3  # a lost Pod is replaced by a fresh worker
    (container,) = pod_containers(job)
    assert container["image"] == IMAGE
    assert container["command"] == ["python", "-m", "rl.tune"]
    assert container["args"] == [
        "--hparams=ppo_tiny",
        "--space=ppo",
        "--trials=40",
        "--output_dir=gs://my-bucket/tunes/ppo_tiny",
        "--seeds_per_trial=3",
        "--last_k=1",
        f"--storage={STORAGE}",
        "--sys=local",
        "--select=False",
    ]
    # The password comes from the Secret; Kubernetes puts it where $(OPTUNA_DB_PASSWORD) stands.
    secret = {"secretKeyRef": {"name": "optuna-db", "key": "password"}}
    assert {"name": "OPTUNA_DB_PASSWORD", "valueFrom": secret} in container["env"]


def test_dry_run_prints_the_job_and_sends_nothing(api, capsys):
    argv = [*BASE, "--storage", "grpc://optuna-proxy:13000", "--workers", "2", "--image", IMAGE]
    status, out, err = run_tune(capsys, [*argv, "--dry_run"])
    assert status == 0 and err == ""
    (job,) = list(yaml.safe_load_all(out))
    assert job["kind"] == "Job" and job["spec"]["parallelism"] == 2
    assert "--storage=grpc://optuna-proxy:13000" in pod_containers(job)[0]["args"]
    assert api.requests == []


# fmt: off
CASES = {
    "SQLite cannot be shared by Pods": (["--workers", "2", "--image", IMAGE], ["--storage", "postgresql://"]),
    "no image": (["--workers", "2", "--storage", STORAGE, "--storage_secret", "db"], ["--image", "k8s/Dockerfile.cpu"]),
    "password placeholder without its Secret": (["--workers", "2", "--storage", STORAGE, "--image", IMAGE], ["--storage_secret", "$(OPTUNA_DB_PASSWORD)"]),
    "Secret without the placeholder": (["--workers", "2", "--storage", "grpc://proxy:13000", "--image", IMAGE, "--storage_secret", "db"], ["--storage_secret"]),
    "bad namespace": (["--workers", "2", "--storage", STORAGE, "--storage_secret", "db", "--image", IMAGE, "--namespace", "Team_RL"], ["--namespace"]),
    "zero workers": (["--workers", "0", "--storage", STORAGE, "--image", IMAGE], ["--workers", ">= 1"]),
}
# fmt: on


@pytest.mark.parametrize("case", sorted(CASES))
def test_mistakes_exit_2_with_one_line_and_send_nothing(case, api, capsys):
    flags, words = CASES[case]
    status, out, err = run_tune(capsys, [*BASE, *flags])
    assert status == 2 and out == ""
    assert err.startswith("python -m rl.tune: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, (word, err)
    assert api.requests == []


def test_local_output_dir_is_refused(api, capsys):
    argv = [*BASE[:-2], "--output_dir", "/tmp/tunes", "--workers", "2", "--storage", STORAGE]
    argv += ["--storage_secret", "db"]
    status, _, err = run_tune(capsys, [*argv, "--image", IMAGE])
    assert status == 2 and "gs://" in err and err.count("\n") == 1
    assert api.requests == []
