"""Rendered manifests against the official Kubernetes schemas (kubernetes-validate, strict mode,
offline), JobSets against the vendored JobSet CRD schema (jsonschema, strict) with their child
Jobs through kubernetes-validate too, and against the `kubernetes` client's own models; plus
names and the k8s/ examples. What the failure policies do on a preemption, a crash, a user
error or a divergence is checked against the Job and JobSet controllers' rules in
test_failure_policies.py.

No API server is involved: `kubectl --dry-run=client` needs one. Strict mode rejects any field
the schema does not declare, so a misspelled key fails here instead of being dropped silently.
"""

from __future__ import annotations

import dataclasses
import datetime
import random
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml
from jobset_schema import child_jobs, validate_jobset
from kubernetes.client import V1Job, V1JobTemplateSpec, V1Service
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
    jobset_max_name,
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
        spec(), workers=8, gpus_per_worker=8, gpu_type="nvidia-h100-80gb", backoff_limit=5
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
        if loaded["kind"] == "JobSet":
            validate_jobset(loaded)
            jobs = child_jobs(loaded)
            assert len(jobs) == 1
            for job in jobs:
                kubernetes_validate.validate(job, version, strict=True)
        else:
            kubernetes_validate.validate(loaded, version, strict=True)


def test_multi_pod_runs_are_jobsets_and_one_pod_runs_are_jobs():
    kinds = {case: [m["kind"] for m in manifests] for case, manifests in RENDERED.items()}
    for tpu in TPU_TYPES:
        want = ["JobSet"] if parse_tpu(tpu).multi_host else ["Job"]
        assert kinds[f"tpu-{tpu}"] == want, tpu
    assert kinds["workers-cpu-1"] == ["Service", "Job"]
    assert kinds["workers-cpu-3"] == kinds["workers-gpu-8-typed"] == ["JobSet"]
    assert sum(k == ["JobSet"] for k in kinds.values()) == 10  # 4 TPU, 3 workers, 3 examples


def test_strict_validation_is_not_vacuous():
    job = tpu_job_manifests(spec(), parse_tpu("v5e-4"))[0]
    job["spec"]["template"]["spec"]["nodeselector"] = {"x": "y"}  # misspelled field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, K8S_VERSIONS[0], strict=True)
    job = tpu_job_manifests(spec(), parse_tpu("v5e-4"))[0]
    job["spec"]["completions"] = "one"  # an integer field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, K8S_VERSIONS[0], strict=True)
    job = tpu_job_manifests(spec(), parse_tpu("v5e-4"))[0]
    rule = job["spec"]["podFailurePolicy"]["rules"][1]
    # A misspelled key of the policy. (A wrong `action` is not caught offline: the OpenAPI
    # schema has no enum for it; the API server's Go validation checks it.)
    rule["onExitCode"] = rule.pop("onExitCodes")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, K8S_VERSIONS[0], strict=True)


def _jobset():
    (jobset,) = worker_job_manifests(spec(), workers=3)
    return jobset


@pytest.mark.parametrize(
    "damage",
    [
        "misspelled_top_field",
        "misspelled_pod_field",
        "unknown_action",
        "unknown_restart_strategy",
        "string_max_restarts",
        "rule_without_name",
        "int32_overflow",
        "wrong_kind",
    ],
)
def test_jobset_schema_validation_is_not_vacuous(damage):
    jobset = _jobset()
    validate_jobset(jobset)
    policy = jobset["spec"]["failurePolicy"]
    job_spec = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]
    if damage == "misspelled_top_field":
        jobset["spec"]["failurePolicies"] = jobset["spec"].pop("failurePolicy")
    elif damage == "misspelled_pod_field":
        job_spec["template"]["spec"]["nodeselector"] = {"x": "y"}
    elif damage == "unknown_action":
        policy["rules"][0]["action"] = "RestartJobSetIgnoringMaxRestarts"
    elif damage == "unknown_restart_strategy":
        policy["restartStrategy"] = "Blocking"
    elif damage == "string_max_restarts":
        policy["maxRestarts"] = "3"
    elif damage == "rule_without_name":
        del policy["rules"][1]["name"]
    elif damage == "int32_overflow":
        policy["maxRestarts"] = 2**31
    elif damage == "wrong_kind":
        jobset["kind"] = "Jobset"
    with pytest.raises(jsonschema.ValidationError):
        validate_jobset(jobset)


def test_jobset_strict_mode_is_what_finds_unknown_fields():
    # Without strict mode the API server would drop an unknown field silently (pruning).
    jobset = _jobset()
    jobset["spec"]["failurePolicy"]["maxRestart"] = 3
    validate_jobset(jobset, strict=False)
    with pytest.raises(jsonschema.ValidationError, match="maxRestart"):
        validate_jobset(jobset)


@pytest.mark.parametrize("case", sorted(RENDERED))
def test_the_client_models_accept_them(case):
    # kubernetes 37 validates request bodies with pydantic models before sending.
    for manifest in RENDERED[case]:
        if manifest["kind"] == "JobSet":  # a custom resource: the client has no model for it
            for replicated in manifest["spec"]["replicatedJobs"]:
                template = V1JobTemplateSpec.from_dict(replicated["template"])
                assert template.spec.backoff_limit == 0
                assert template.spec.pod_failure_policy.rules[0].action == "FailJob"
            continue
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
    assert job["spec"]["podFailurePolicy"] == {
        "rules": [
            {
                "action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            },
            {
                "action": "Ignore",
                "onExitCodes": {"containerName": "trainer", "operator": "In", "values": [75]},
            },
            {
                "action": "FailJob",
                "onExitCodes": {"containerName": "trainer", "operator": "In", "values": [2, 3]},
            },
        ]
    }
    # The replacement starts once the preempted Pod has written its checkpoint and exited.
    assert job["spec"]["podReplacementPolicy"] == "Failed"
    assert pod["terminationGracePeriodSeconds"] == 30  # --preemption_grace 25 + 5
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
    (jobset,) = tpu_job_manifests(spec(name), parse_tpu("v4-32"))
    assert jobset["kind"] == "JobSet" and jobset["metadata"]["name"] == name
    # The JobSet controller makes the headless Service `name` and sets it as the subdomain.
    assert jobset["spec"]["network"] == {
        "enableDNSHostnames": True,
        "publishNotReadyAddresses": True,
        "subdomain": name,
    }
    (replicated,) = jobset["spec"]["replicatedJobs"]
    assert (replicated["name"], replicated["replicas"]) == ("workers", 1)
    job = replicated["template"]
    pod = job["spec"]["template"]["spec"]
    assert "subdomain" not in pod
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 4
    assert job["spec"]["backoffLimit"] == 0  # the JobSet restarts the group instead
    assert jobset["spec"]["failurePolicy"]["maxRestarts"] == 3
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    # Child Job `<name>-workers-0`; the Job controller names Pod i's host `<job>-<i>`.
    hosts = [f"{name}-workers-0-{i}.{name}" for i in range(4)]
    assert env["TPU_WORKER_HOSTNAMES"]["value"] == ",".join(hosts)
    assert "job-completion-index" in env["TPU_WORKER_ID"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert pod["terminationGracePeriodSeconds"] == 30


def test_worker_job_env_feeds_tf_config():
    from rl.distribute.tf_config import tf_config_from_env

    name = "rl-x-20261121-120000-ab12"
    (jobset,) = worker_job_manifests(spec(name), workers=3, gpus_per_worker=2)
    (job,) = child_jobs(jobset)
    assert job["metadata"]["name"] == f"{name}-workers-0"
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": "2"}
    env = {e["name"]: e["value"] for e in container["env"]}
    env["JOB_COMPLETION_INDEX"] = "1"  # what the Job controller adds to Pod 1
    config = tf_config_from_env(env)
    # Pod 1's hostname (`<child job>-1`) in the JobSet's Service (its subdomain).
    subdomain = jobset["spec"]["network"]["subdomain"]
    assert config["cluster"]["worker"][1] == f"{job['metadata']['name']}-1.{subdomain}:2222"
    assert config["cluster"]["worker"][1] == f"{name}-workers-0-1.{name}:2222"
    assert config["task"]["index"] == 1


def test_one_worker_is_a_job_with_its_service():
    name = "rl-x-20261121-120000-ab12"
    service, job = worker_job_manifests(spec(name), workers=1)
    pod = job["spec"]["template"]["spec"]
    assert service["metadata"]["name"] == pod["subdomain"] == name
    assert job["spec"]["backoffLimit"] == 3 and job["spec"]["completionMode"] == "Indexed"
    assert [r["action"] for r in job["spec"]["podFailurePolicy"]["rules"]] == [
        "Ignore",
        "Ignore",
        "FailJob",
    ]
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    assert env["RL_JOB_NAME"] == name


@pytest.mark.parametrize(
    ("grace", "seconds"), [(25.0, 30), (10.0, 15), (0.5, 6), (29.2, 35), (600.0, 605)]
)
def test_termination_grace_exceeds_the_preemption_grace(grace, seconds):
    for manifests in (
        tpu_job_manifests(dataclasses.replace(spec(), preemption_grace=grace), parse_tpu("v5e-4")),
        worker_job_manifests(dataclasses.replace(spec(), preemption_grace=grace), workers=1),
    ):
        pod = manifests[-1]["spec"]["template"]["spec"]
        assert pod["terminationGracePeriodSeconds"] == seconds
        assert pod["terminationGracePeriodSeconds"] >= grace + 5


@pytest.mark.parametrize("pods", [2, 4, 9, 10, 64, 100, 1000, 100_000])
def test_jobset_names_fit_the_webhooks_pod_name_limit(pods):
    """The JobSet webhook refuses a JobSet whose longest Pod name `<jobset>-workers-0-<last
    index>-<5 chars>` is over 63 characters; generated names are cut to fit."""
    longest = jobset_max_name(pods)
    assert len(f"{'x' * longest}-workers-0-{pods - 1}-abcde") == 63
    now = datetime.datetime(2026, 11, 21, 12, 0, 0, tzinfo=datetime.UTC)
    name = make_job_name("ppo_" + "very_long_" * 10, now, random.Random(0), max_len=longest)
    assert len(name) <= longest and DNS_LABEL.match(name) and name[0].isalpha()
    (jobset,) = worker_job_manifests(spec(name), workers=pods)
    (job,) = child_jobs(jobset)
    assert len(f"{job['metadata']['name']}-{pods - 1}-abcde") <= 63


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


def test_jobset_names_start_with_a_letter():
    assert check_dns_label("7run", "--job_name") == "7run"
    with pytest.raises(UserError, match="starting with a letter and"):
        check_dns_label("7run", "--job_name", letter_first=True)


def test_gpu_type_selects_the_node_pool():
    (jobset,) = worker_job_manifests(spec(), workers=2, gpus_per_worker=2, gpu_type="nvidia-l4")
    (job,) = child_jobs(jobset)
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    _, job = worker_job_manifests(spec(), workers=1, gpus_per_worker=2)
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
        if manifest["kind"] in ("Job", "JobSet"):
            job = (
                manifest["spec"]["replicatedJobs"][0]["template"]
                if manifest["kind"] == "JobSet"
                else manifest
            )
            (container,) = job["spec"]["template"]["spec"]["containers"]
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
