"""Rendered manifests against the official Kubernetes schemas (kubernetes-validate, strict mode,
offline) and against the `kubernetes` client's own models; plus names and the k8s/ examples.

No API server is involved: `kubectl --dry-run=client` needs one. Strict mode rejects any field
the schema does not declare, so a misspelled key fails here instead of being dropped silently.
"""

from __future__ import annotations

import datetime
import random
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from kubernetes.client import V1Job, V1Service
from launcher_fixtures import no_local_training_fixture, run_train  # noqa: F401

from rl.errors import UserError
from rl.systems.manifests import (
    DNS_LABEL,
    EXAMPLE_COMMANDS,
    MAX_JOB_NAME,
    JobSpec,
    check_dns_label,
    example_manifests,
    example_text,
    make_job_name,
    to_yaml,
    tpu_job_manifests,
    worker_job_manifests,
)
from rl.systems.tpu_types import parse_tpu

ROOT = Path(__file__).resolve().parents[2]
# Oldest and newest Kubernetes minor versions we check (GKE's supported range as of 2026-11);
# kubernetes-validate 1.37.0 ships schemas for 1.25 .. 1.37.
K8S_VERSIONS = ["1.30.0", "1.37.0"]
# One-host and multi-host shapes of every generation.
TPU_TYPES = ["v4-8", "v4-32", "v5e-1", "v5e-4", "v5e-8", "v5e-16", "v5p-8", "v5p-16", "v6e-4"]
TPU_TYPES += ["v6e-256"]


def spec(name: str = "rl-dqn-cartpole-20261121-120000-ab12") -> JobSpec:
    args = ["--sys=local", "--hparams=dqn_cartpole", "--output_dir=gs://bkt/runs/x"]
    return JobSpec(name, "team-rl", "us-docker.pkg.dev/p/rl/rl-tpu:1", args, "dqn_cartpole")


def all_rendered() -> dict[str, list[dict]]:
    rendered = {f"tpu-{t}": tpu_job_manifests(spec(), parse_tpu(t)) for t in TPU_TYPES}
    rendered["workers-cpu-1"] = worker_job_manifests(spec(), workers=1)
    rendered["workers-cpu-3"] = worker_job_manifests(spec(), workers=3)
    rendered["workers-gpu-2"] = worker_job_manifests(spec(), workers=2, gpus_per_worker=1)
    rendered["workers-gpu-8-typed"] = worker_job_manifests(
        spec(), workers=8, gpus_per_worker=8, gpu_type="nvidia-h100-80gb", backoff_limit=3
    )
    for file_name, manifests in example_manifests().items():
        rendered[f"example-{file_name}"] = manifests
    return rendered


RENDERED = all_rendered()


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("case", sorted(RENDERED))
def test_official_schema_strict(case, version):
    for manifest in RENDERED[case]:
        # Through YAML and back, exactly what `kubectl apply -f -` would read.
        (loaded,) = yaml.safe_load_all(to_yaml([manifest]))
        assert loaded == manifest
        kubernetes_validate.validate(loaded, version, strict=True)


def test_strict_validation_is_not_vacuous():
    job = tpu_job_manifests(spec(), parse_tpu("v5e-4"))[0]
    job["spec"]["template"]["spec"]["nodeselector"] = {"x": "y"}  # misspelled field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, K8S_VERSIONS[0], strict=True)
    job = tpu_job_manifests(spec(), parse_tpu("v5e-4"))[0]
    job["spec"]["completions"] = "one"  # an integer field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, K8S_VERSIONS[0], strict=True)


@pytest.mark.parametrize("case", sorted(RENDERED))
def test_the_client_models_accept_them(case):
    # kubernetes 37 validates request bodies with pydantic models before sending.
    for manifest in RENDERED[case]:
        model = {"Job": V1Job, "Service": V1Service}[manifest["kind"]]
        assert model.from_dict(manifest).metadata.name == manifest["metadata"]["name"]


def test_integer_quantities_are_refused_by_the_client():
    job = tpu_job_manifests(spec(), parse_tpu("v5e-4"))[0]
    limits = job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"google.com/tpu": "4"}
    limits["google.com/tpu"] = 4
    with pytest.raises(ValueError):  # pydantic.ValidationError is a ValueError
        V1Job.from_dict(job)


def test_single_host_tpu_job():
    (job,) = tpu_job_manifests(spec(), parse_tpu("v6e-8"))
    pod = job["spec"]["template"]["spec"]
    assert job["spec"]["backoffLimit"] == 3 and pod["restartPolicy"] == "Never"
    assert "completionMode" not in job["spec"] and job["spec"]["completions"] == 1
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "2x4",
    }
    (container,) = pod["containers"]
    assert container["resources"]["requests"] == {"google.com/tpu": "8"}
    assert container["command"] == ["python", "train.py"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["RL_STRATEGY"] == "tpu" and env["RL_TPU_TYPE"] == "v6e-8"


def test_multi_host_names_are_consistent():
    name = "rl-x-20261121-120000-ab12"
    service, job = tpu_job_manifests(spec(name), parse_tpu("v4-32"))
    pod = job["spec"]["template"]["spec"]
    assert service["metadata"]["name"] == job["metadata"]["name"] == pod["subdomain"] == name
    assert service["spec"]["clusterIP"] == "None"
    assert (
        service["spec"]["selector"].items() <= job["spec"]["template"]["metadata"]["labels"].items()
    )
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 4
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    assert env["TPU_WORKER_HOSTNAMES"]["value"] == ",".join(f"{name}-{i}.{name}" for i in range(4))
    assert "job-completion-index" in env["TPU_WORKER_ID"]["valueFrom"]["fieldRef"]["fieldPath"]


def test_worker_job_env_feeds_tf_config():
    from rl.systems.tf_config import tf_config_from_env

    name = "rl-x-20261121-120000-ab12"
    service, job = worker_job_manifests(spec(name), workers=3, gpus_per_worker=2)
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": "2"}
    env = {e["name"]: e["value"] for e in container["env"]}
    env["JOB_COMPLETION_INDEX"] = "1"  # what the Job controller adds to Pod 1
    config = tf_config_from_env(env)
    assert config["cluster"]["worker"][1] == f"{name}-1.{service['metadata']['name']}:2222"
    assert config["task"]["index"] == 1


def test_job_names():
    now = datetime.datetime(2026, 11, 21, 12, 0, 0, tzinfo=datetime.UTC)
    name = make_job_name("dqn_cartpole", now, random.Random(0))
    assert name.startswith("rl-dqn-cartpole-20261121-120000-") and len(name) == 36
    long = make_job_name("ppo_" + "very_long_" * 10 + "_set", now, random.Random(0))
    assert len(long) <= MAX_JOB_NAME and DNS_LABEL.match(long)
    # Indexed Job Pod hostnames `<job>-<index>` must stay valid labels too.
    assert len(f"{long}-1023") <= 63
    assert make_job_name("dqn_cartpole", now, random.Random(0)) == name
    assert make_job_name("dqn_cartpole", now, random.Random(1)) != name


@pytest.mark.parametrize("bad", ["Team", "team_rl", "-team", "team-", "", "a" * 64, "a.b"])
def test_bad_dns_labels(bad):
    with pytest.raises(UserError, match="not a valid Kubernetes name"):
        check_dns_label(bad, "--namespace")


def test_gpu_type_selects_the_node_pool():
    _, job = worker_job_manifests(spec(), workers=2, gpus_per_worker=2, gpu_type="nvidia-l4")
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    _, job = worker_job_manifests(spec(), workers=2, gpus_per_worker=2)
    assert "nodeSelector" not in job["spec"]["template"]["spec"]


@pytest.mark.usefixtures("no_local_training")
@pytest.mark.parametrize("file_name", sorted(EXAMPLE_COMMANDS))
def test_k8s_examples_are_what_the_launcher_prints(file_name, capsys, monkeypatch, tmp_path):
    """`train.py <the command in the example's header> --dry_run` prints the example exactly,
    but for the image and the Pod's flags (the examples use placeholders no check accepts)."""
    example = example_manifests()[file_name]
    name = example[0]["metadata"]["name"]
    image = "us-docker.pkg.dev/my-project/rl/rl:1"
    output_dir = "gs://my-bucket/runs/dqn_cartpole"
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))  # a dry run reads no kubeconfig
    argv = [*EXAMPLE_COMMANDS[file_name].split(), "--hparams", "dqn_cartpole", "--dry_run"]
    argv += ["--output_dir", output_dir, "--image", image, "--job_name", name]
    status, out, err = run_train(capsys, argv)
    assert status == 0, err
    printed = list(yaml.safe_load_all(out))
    for manifest in example:
        if manifest["kind"] == "Job":
            (container,) = manifest["spec"]["template"]["spec"]["containers"]
            container["image"] = image
            assert container["args"][-1] == "--output_dir=gs://BUCKET/runs/dqn_cartpole"
            container["args"][-1] = f"--output_dir={output_dir}"
    assert printed == example


def test_k8s_examples_are_current():
    for file_name, manifests in example_manifests().items():
        path = ROOT / "k8s" / file_name
        assert path.read_text(encoding="utf-8") == example_text(file_name, manifests), (
            f"k8s/{file_name} is stale; regenerate with: "
            ".venv/bin/python -m rl.systems.manifests k8s/"
        )


def test_dockerfiles_check_the_pinned_tensorflow():
    """Each image asserts at build time the TF version it is meant to carry; those versions
    follow requirements.txt (CPU/GPU) and requirements-tpu.txt (TPU)."""
    pins = dict(
        line.split("==")
        for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if "==" in line and not line.startswith("#")
    )
    major_minor = ".".join(pins["tensorflow"].split(".")[:2])
    for image in ("cpu", "gpu"):
        text = (ROOT / "k8s" / f"Dockerfile.{image}").read_text(encoding="utf-8")
        assert f"tf.__version__.startswith('{major_minor}')" in text, image
    gpu = (ROOT / "k8s" / "Dockerfile.gpu").read_text(encoding="utf-8")
    assert "tensorflow[and-cuda]==" in gpu and "LD_LIBRARY_PATH=/usr/local/nvidia/lib64" in gpu
    # The TPU image's pins are in requirements-tpu.txt (tests/systems/test_tpu_image_pins.py);
    # its build checks that the TF which imports is tensorflow-tpu's release.
    tpu = (ROOT / "k8s" / "Dockerfile.tpu").read_text(encoding="utf-8")
    assert "tf.__version__ == m.version('tensorflow-tpu')" in tpu
