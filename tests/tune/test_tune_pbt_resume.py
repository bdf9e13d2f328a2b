"""A PBT study killed with SIGKILL mid-schedule resumes bit-exactly: the same command ends with
the lineage, evaluations and final weights of an uninterrupted study (`rl.tune.pbt`: rounds
after the checkpoint it resumes from are decided again, from the same seeded choices), also
when the kill left one member a checkpoint ahead of the others (`resume_together`); and one
killed late, while its members' last checkpoints are written or after, is finished by the same
command with the lineage and winner.json of an uninterrupted study."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest
from tune_fixtures import REPO_ROOT, tune_env

FLAGS = ["--hparams", "ppo_tf_tiny", "--space", "ppo", "--keys", "lr,ent_coef"]
FLAGS += ["--population", "4", "--pbt", "--pbt_interval", "256", "--train_steps", "2048"]
FLAGS += ["--hparam_override", "checkpoint_every=512", "--last_k", "1", "--select", "False"]
MEMBERS = [f"member_{m}" for m in range(4)]
# ppo_tf_tiny's own 256 env steps (a round at 128), then the winner's re-run on a fresh seed.
LATE = ["--hparams", "ppo_tf_tiny", "--space", "ppo", "--keys", "lr,ent_coef", "--last_k", "1"]
LATE += ["--population", "4", "--pbt", "--pbt_interval", "128", "--fresh_seeds", "1"]


def _command(out, flags: list[str]) -> list[str]:
    import sys

    return [sys.executable, "-m", "rl.tune", *flags, "--output_dir", str(out)]


def _start(out, flags: list[str] = FLAGS, **pipes) -> subprocess.Popen:
    command = _command(out, flags)
    return subprocess.Popen(command, cwd=REPO_ROOT, env=tune_env(), text=True, **pipes)


def _finish(process: subprocess.Popen) -> None:
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr[-2000:]


def _latest_step(run) -> int:
    try:
        return json.loads((run / "checkpoints" / "latest.json").read_text())["step"]
    except (FileNotFoundError, json.JSONDecodeError):
        return 0


def _final(out) -> dict:
    """Lineage, every evaluation, and the digest of every member's last checkpoint's weights."""
    runs = [out / "members" / m for m in MEMBERS]
    digests = []
    for run in runs:
        manifest = json.loads(
            (run / "checkpoints" / "step_000000002048" / "manifest.json").read_text()
        )
        digests.append(manifest["files"]["tf.data-00000-of-00001"]["sha256"])
    evaluations = [(run / "progress.csv").read_text().splitlines() for run in runs]
    evaluations = [
        [line.split(",")[0] + "," + line.split(",")[2] for line in lines] for lines in evaluations
    ]
    return {"lineage": json.loads((out / "lineage.json").read_text()), "digests": digests,
            "evaluations": evaluations}  # fmt: skip


@pytest.mark.e2e
def test_a_pbt_study_killed_mid_schedule_resumes_bit_exactly(tmp_path):
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    # The uninterrupted study runs beside the one that gets killed (one core each).
    uninterrupted = _start(reference, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    process = _start(killed, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    last = killed / "members" / MEMBERS[-1]  # saved after the others, at the same step
    deadline = time.monotonic() + 240
    while _latest_step(last) < 1024 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    steps = [_latest_step(killed / "members" / m) for m in MEMBERS]
    assert len(set(steps)) == 1 and 1024 <= steps[0] < 2048, steps  # killed mid-schedule
    # As if killed after member 0's checkpoint, before the others': they point a step back.
    back = steps[0] - 512
    pointer = json.dumps({"step": back, "directory": f"step_{back:012d}"})
    for member in MEMBERS[1:]:
        (killed / "members" / member / "checkpoints" / "latest.json").write_text(pointer)
    _finish(_start(killed, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    _finish(uninterrupted)
    assert _final(killed) == _final(reference)
    rounds = [e["step"] for entries in _final(reference)["lineage"]["members"] for e in entries]
    assert sorted(set(rounds)) == list(range(0, 2048, 256))


@pytest.mark.e2e
def test_a_pbt_study_killed_at_its_last_checkpoints_finishes_as_uninterrupted(tmp_path):
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    pipes = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
    uninterrupted = _start(reference, LATE, **pipes)
    process = _start(killed, LATE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = killed / "members" / MEMBERS[0]  # saved before the others, at the same step
    deadline = time.monotonic() + 240
    while _latest_step(first) < 256 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL and not (killed / "winner.json").exists()
    _finish(_start(killed, LATE, **pipes))
    _finish(uninterrupted)
    results = [
        {name: json.loads((out / name).read_text()) for name in ("lineage.json", "winner.json")}
        for out in (killed, reference)
    ]
    assert results[0] == results[1]
