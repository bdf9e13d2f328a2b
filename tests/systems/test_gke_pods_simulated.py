"""The two Pods of a `--sys gke --workers 2` JobSet, simulated on this machine: they find each
other by the headless Service's DNS names, train together, are killed, and the restarted group
resumes them.

What the cluster gives each Pod of the JobSet's Indexed Job is rebuilt with Linux namespaces:
`unshare` makes a private mount and network namespace; inside it, two `ip netns` namespaces
joined by a veth pair play the two Pods, each with its own IP (so both listen on the manifest's
port 2222); a hosts file bind-mounted over /etc/hosts (in the private mount namespace only)
resolves the Pods' names `<job>-<i>.<subdomain>` (child Job `<jobset>-workers-0`, subdomain
`<jobset>`) as the Service the JobSet controller makes would. Each Pod runs the rendered
container's command, args and env, plus the JOB_COMPLETION_INDEX the Job controller adds; only
`--output_dir` is a local directory instead of gs:// and `python` is this interpreter. A JobSet
restart recreates the same Job with the same names, so the second start is the same Pods again.
Nothing outside the namespaces changes. Needs root, `unshare` and `ip` (skipped elsewhere);
slow: two TensorFlow processes, twice.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jobset_schema import child_jobs
from launcher_fixtures import no_local_training_fixture, run_train  # noqa: F401

REPO_ROOT = Path(__file__).resolve().parents[2]
POD_IPS = ("10.9.0.1", "10.9.0.2")
TRAIN_STEPS = 3000  # dqn_tiny checkpoints every 300 steps

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_local_training")]


def _namespaces_available() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        return False
    probe = ["unshare", "--mount", "--net", "--propagation", "private", "ip", "link"]
    return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0


def render_job(capsys, jobset_name: str) -> dict:
    """The child Job of the JobSet that `train.py --sys gke --workers 2 ... --dry_run` prints,
    with the Pods' subdomain the JobSet controller sets."""
    argv = ["--sys", "gke", "--workers", "2", "--hparams", "dqn_tiny", "--dry_run"]
    argv += ["--train_steps", str(TRAIN_STEPS), "--job_name", jobset_name]
    argv += ["--image", "us-docker.pkg.dev/p/rl/rl-cpu:1", "--output_dir", "gs://my-bucket/x"]
    status, out, err = run_train(capsys, argv)
    assert status == 0, err
    (jobset,) = yaml.safe_load_all(out)
    (job,) = child_jobs(jobset)
    job["spec"]["template"]["spec"]["subdomain"] = jobset["spec"]["network"]["subdomain"]
    return job


def pods_script(job: dict, output_dir: Path, logs: Path, kill_after: str | None, label: str) -> str:
    """A bash script, run inside `unshare --mount --net`, that starts every Pod of `job` and
    waits for them; with `kill_after`, it kills them all (SIGKILL) once that path exists."""
    name = job["metadata"]["name"]
    subdomain = job["spec"]["template"]["spec"]["subdomain"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    args = [
        f"--output_dir={output_dir}" if arg.startswith("--output_dir=") else arg
        for arg in container["args"]
    ]
    assert container["command"][0] == "python"
    command = [sys.executable, *container["command"][1:], *args]
    hosts = "".join(f"{ip} {name}-{i}.{subdomain}\n" for i, ip in enumerate(POD_IPS))
    (logs / "hosts").write_text(f"127.0.0.1 localhost\n{hosts}", encoding="utf-8")
    lines = [
        "set -e",
        "mkdir -p /run/netns && mount -t tmpfs tmpfs /run/netns",
        f"mount --bind {logs / 'hosts'} /etc/hosts",
        "ip link add veth0 type veth peer name veth1",
    ]
    for i, ip in enumerate(POD_IPS):
        lines += [
            f"ip netns add pod{i}",
            f"ip link set veth{i} netns pod{i}",
            f"ip -n pod{i} addr add {ip}/24 dev veth{i}",
            f"ip -n pod{i} link set veth{i} up",
            f"ip -n pod{i} link set lo up",
        ]
    lines.append("set +e")
    for i in range(job["spec"]["completions"]):
        env = {e["name"]: e["value"] for e in container["env"]}
        env |= {"JOB_COMPLETION_INDEX": str(i), "CUDA_VISIBLE_DEVICES": ""}
        assigned = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        run = " ".join(map(shlex.quote, command))
        log = logs / f"{label}-{i}.log"
        pod = f"cd {REPO_ROOT} && exec ip netns exec pod{i} env {assigned} {run}"
        lines += [f"({pod}) >{log} 2>&1 &", f"pid{i}=$!"]
    if kill_after:
        lines += [
            f"while [ ! -e {kill_after} ]; do sleep 0.1; done",
            "kill -9 $pid0 $pid1",
        ]
    lines += ["wait $pid0; echo pod0 exit $?", "wait $pid1; echo pod1 exit $?"]
    return "\n".join(lines) + "\n"


def run_pods(script: str, logs: Path, label: str) -> str:
    path = logs / f"{label}.sh"
    path.write_text(script, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    proc = subprocess.run(
        ["unshare", "--mount", "--net", "--propagation", "private", "bash", str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_two_pods_train_together_and_the_restarted_group_resumes_them(capsys, tmp_path):
    if not _namespaces_available():
        pytest.skip("needs root, unshare and ip netns")
    output_dir, logs = tmp_path / "out", tmp_path / "logs"
    logs.mkdir()
    checkpoints = output_dir / "run_0" / "checkpoints"

    # First start: both Pods run; a preemption kills both after the first checkpoint.
    job = render_job(capsys, "sim-run")
    assert job["metadata"]["name"] == "sim-run-workers-0"
    kill_after = str(checkpoints / "latest.json")
    run_pods(pods_script(job, output_dir, logs, kill_after, "first"), logs, "a")
    assert not (checkpoints / f"step_{TRAIN_STEPS:012d}").exists(), "killed too late to resume"

    # The JobSet restarts the group: the same Job, the same Pod names, a fresh start.
    stdout = run_pods(pods_script(job, output_dir, logs, None, "restart"), logs, "b")
    assert "pod0 exit 0" in stdout and "pod1 exit 0" in stdout, stdout
    chief = (logs / "restart-0.log").read_text(encoding="utf-8")
    worker = (logs / "restart-1.log").read_text(encoding="utf-8")
    resumed = re.search(r"\[run_0\] resuming from checkpoint at ([\d,]+) env steps", chief)
    assert resumed, chief[-2000:]
    assert 300 <= int(resumed[1].replace(",", "")) < TRAIN_STEPS
    # Worker 1 restores the same (chief's) checkpoint and trains to the end with it.
    assert f"resuming from checkpoint at {resumed[1]} env steps" in worker, worker[-2000:]
    assert f"[run_0 worker 1] step {TRAIN_STEPS:,}/{TRAIN_STEPS:,}" in worker
    assert f"[run_0] step {TRAIN_STEPS:,}/{TRAIN_STEPS:,}" in chief
    # Only the chief (worker 0) writes the run dir; it holds the final checkpoint.
    assert (checkpoints / f"step_{TRAIN_STEPS:012d}").is_dir()
    rows = (output_dir / "run_0" / "progress.csv").read_text(encoding="utf-8").splitlines()
    assert rows[-1].split(",")[0] == str(TRAIN_STEPS)
