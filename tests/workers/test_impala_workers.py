"""train.py --num_workers 2 with IMPALA: asynchronous Ray actors feeding the V-trace learner
end to end, and the actor lifecycle (a crash as one line, resume, no child left).

Stop times are not asserted (no timing thresholds in tests); the timeouts only keep a hung run
from hanging the suite.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import tensorflow as tf
from conftest import describe, stderr_lines, tree_hashes
from process_tools import TrainProcess

import train
from rl import registry
from rl.envs import make_vector_env
from rl.hparams import HParams
from rl.utils.checkpoint import CheckpointStore

RAISING_ENV = "tests.workers.raising_env:RaisingCartPole"
TIMEOUT = 300


def _pointer(run_dir: Path) -> dict:
    return json.loads((run_dir / "checkpoints" / "latest.json").read_text())


def _rows(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "progress.csv", newline="") as f:
        return list(csv.DictReader(f))


def _tags(event_dir: Path) -> set[str]:
    tags = set()
    for path in event_dir.glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            tags.update(value.tag for value in event.summary.value)
    return tags


@pytest.mark.e2e  # Ray's and the actors' processes
def test_impala_tiny_with_two_asynchronous_actors(tmp_path, run_train):
    """impala_tiny with 2 Ray actors: the run completes with the usual outputs plus the
    policy lag and per-actor throughput, every actor delivered unrolls, no child process is
    left, and the checkpoint restores into a freshly built learner. Run again: already done."""
    out = tmp_path / "out"
    run_dir = out / "run_0"
    args = ["--hparams", "impala_tiny", "--num_workers", "2", "--output_dir", out]
    (tmp_path / "run").mkdir()
    run = TrainProcess(args, tmp_path / "run")
    run.wait_for(lambda: False, TIMEOUT)  # records the process tree until the exit
    assert run.finish(timeout=60) == 0, run.describe()
    assert stderr_lines(run.stderr) == [], run.describe()
    assert (
        "IMPALA: 2 actors x 2 env copies, unrolls of 8 steps; this learner learns "
        "from 2 unrolls at a time" in run.stdout
    ), run.describe()
    assert len(run.children) >= 4, run.describe()  # Ray's processes and the actors did run
    assert not run.orphans(), f"children alive after the exit: {run.orphans()}"

    hp = HParams.from_json((run_dir / "hparams.json").read_text()).freeze()
    assert json.loads((run_dir / "manifest.json").read_text())["num_workers"] == 2
    rows = _rows(run_dir)
    assert int(rows[-1]["env_steps"]) >= hp.train_steps
    lags = [float(row["policy_lag"]) for row in rows if row["policy_lag"]]
    assert lags and all(lag >= 0 for lag in lags), rows
    # Per-actor columns (which actor delivered how much depends on process timing: a learner
    # that does not wait for every actor may, in a run this short, get it all from one).
    assert {"worker_0_steps_per_second", "worker_1_steps_per_second"} <= set(rows[-1])
    assert sum(float(rows[-1][f"worker_{i}_episodes"] or 0) for i in (0, 1)) > 0, rows
    tags = _tags(run_dir / "train")
    wanted = {"loss", "rho_mean", "approx_kl", "entropy", "episode_return"}
    wanted |= {"workers/policy_lag", "workers/policy_lag_max", "workers/0/steps_per_second"}
    assert wanted <= tags, sorted(wanted - tags)

    env, spec = make_vector_env(hp.env, hp.num_envs, 0)
    env.close()
    agent = registry.get_agent("impala")(spec, hp, 0)
    _, trainer_state = CheckpointStore(str(run_dir / "checkpoints"), 1).restore(
        tf.train.Checkpoint(agent=agent)
    )
    assert int(agent.env_steps.numpy()) == trainer_state["env_steps"] == _pointer(run_dir)["step"]
    assert int(agent.learner.gradient_steps.numpy()) == trainer_state["updates"] * 4  # 2 epochs x 2
    assert trainer_state["updates"] > 0

    again = run_train(args)
    assert again.returncode == 0 and "[run_0] already complete" in again.stdout, describe(again)


@pytest.mark.slow  # ~45 s of CPU; the crash path is every actor's (rl/workers/actor.py), tested
def test_impala_actor_crash_then_resume(tmp_path):  # for Ape-X in test_train_workers.py
    """Actor 1's env raises, with --max_actor_restarts 0: exit 1 with ONE stderr line naming
    worker 1 and its error, no child left, a checkpoint written before. The same command without
    the failure resumes the learner from that checkpoint with fresh actors and completes the
    run."""
    out = tmp_path / "out"
    run_dir = out / "run_0"
    args = ["--hparams", "impala_tiny", "--num_workers", "2", "--env", RAISING_ENV]
    args += ["--output_dir", out, "--train_steps", "512"]
    args += ["--hparam_override", "checkpoint_every=64,eval.every_steps=1024"]
    (tmp_path / "crash").mkdir()
    crash = TrainProcess(
        [*args, "--max_actor_restarts", "0"],
        tmp_path / "crash",
        {"RL_TEST_RAISE_AFTER": "40", "RL_TEST_RAISE_IN_WORKER": "1"},
    )
    crash.wait_for(lambda: False, TIMEOUT)
    assert crash.finish(timeout=60) == 1, crash.describe()
    lines = stderr_lines(crash.stderr)
    assert len(lines) == 1, crash.describe()
    assert lines[0].startswith(
        "train.py: worker 1 failed: RuntimeError: injected failure after 40 steps (traceback: "
    ), lines[0]
    trace = Path(lines[0].split("(traceback: ")[1].split(")")[0]).read_text()
    assert "raising_env.py" in trace and "injected failure" in trace, trace
    assert len(crash.children) >= 2, crash.describe()
    assert not crash.orphans(), f"children alive after the exit: {crash.orphans()}"
    crashed_at = _pointer(run_dir)["step"]
    assert 0 < crashed_at < 512

    (tmp_path / "resume").mkdir()
    resume = TrainProcess(args, tmp_path / "resume")
    resume.wait_for(lambda: False, TIMEOUT)
    assert resume.finish(timeout=60) == 0, resume.describe()
    assert (
        f"resuming from checkpoint at {crashed_at:,} env steps (learner; fresh actors)"
        in resume.stdout
    ), resume.describe()
    assert not resume.orphans(), f"children alive after the exit: {resume.orphans()}"
    assert _pointer(run_dir)["step"] >= 512
    assert any(int(row["env_steps"]) > crashed_at and row["policy_lag"] for row in _rows(run_dir))


@pytest.mark.parametrize(
    ("argv", "keywords"),
    [
        (["--num_workers", "3"], ["num_envs=4", "3 processes", "multiple of 3"]),
        (
            ["--num_workers", "2", "--record_video"],
            ["--record_video", "IMPALA", "--training False"],
        ),
    ],
)
def test_impala_worker_mistakes_are_one_line(argv, keywords, capsys, tmp_path):
    before = tree_hashes(tmp_path)
    capsys.readouterr()
    status = train.main(["--hparams", "impala_tiny", *argv, "--output_dir", str(tmp_path / "o")])
    lines = stderr_lines(capsys.readouterr().err)
    assert status == 2 and len(lines) == 1 and lines[0].startswith("train.py: error: "), lines
    for keyword in keywords:
        assert keyword in lines[0], lines[0]
    assert tree_hashes(tmp_path) == before  # nothing written
