"""train.py --num_workers 2 end to end: Ape-X (DQN) Ray actors with a crashing actor restarted,
then out of restarts, a resume, Ctrl-C; parallel env workers for PPO (same results as one
process).

Each test records the train.py process tree while it runs (/proc) and checks that no child
outlives it. Stop times are not asserted (no timing thresholds in tests); the generous timeouts
only keep a hung run from hanging the suite.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from conftest import stderr_lines, train_env
from process_tools import REPO_ROOT, TrainProcess

from rl import registry
from rl.envs import make_vector_env
from rl.hparams import HParams
from rl.utils.checkpoint import CheckpointStore, read_numpy_state

# e2e: Ray's and the actors' processes, a crash, Ctrl-C to the process group
pytestmark = pytest.mark.e2e

RAISING_ENV = "tests.workers.raising_env:RaisingCartPole"
APEX_ARGS = ["--hparams", "dqn_tiny", "--num_workers", "2", "--env", RAISING_ENV]
# A checkpoint every block of 50 env steps, so one exists long before the injected failure; a
# replay that never fills, so that a resumed run's keeps growing.
OVERRIDE = ["--hparam_override", "checkpoint_every=50,buffer_size=100000"]
TIMEOUT = 300


def _pointer(run_dir: Path) -> dict:
    return json.loads((run_dir / "checkpoints" / "latest.json").read_text())


def _replay_size(run_dir: Path) -> int:
    directory = run_dir / "checkpoints" / _pointer(run_dir)["directory"]
    return int(read_numpy_state(str(directory))["replay/size"])


def _tags(event_dir: Path) -> set[str]:
    tags = set()
    for path in event_dir.glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            tags.update(value.tag for value in event.summary.value)
    return tags


def _restore_dqn(run_dir: Path) -> int:
    """Restores the latest checkpoint into a freshly built agent (every variable must match)
    and returns the size of the restored replay."""
    hp = HParams.from_json((run_dir / "hparams.json").read_text()).freeze()
    env, spec = make_vector_env("CartPole-v1", hp.num_envs, 0)
    env.close()
    agent = registry.get_agent(hp.agent)(spec, hp, 0)
    numpy_state, trainer_state = CheckpointStore(str(run_dir / "checkpoints"), 1).restore(
        tf.train.Checkpoint(agent=agent)
    )
    agent.load_numpy_state(numpy_state)
    assert int(agent.env_steps.numpy()) == trainer_state["env_steps"]
    return len(agent.replay)


def _trainer_state(run_dir: Path) -> dict:
    directory = run_dir / "checkpoints" / _pointer(run_dir)["directory"]
    return json.loads((directory / "trainer.json").read_text())


def test_apex_worker_crash_then_resume_then_ctrl_c(tmp_path):
    """Ape-X DQN with 2 actors, in two train.py runs on one run dir.

    1. Worker 1's env raises: Ray restarts the actor (said on stdout, counted in the
       checkpoint) while the learner trains on; its new env raises again, one failure more than
       --max_actor_restarts 1 allows: exit 1, ONE stderr line naming worker 1 and its error
       (traceback in a file), no child process left, a checkpoint written before the failure.
    2. The same command without the failure resumes learner + replay from that checkpoint and
       trains on with fresh actors; once it has checkpointed and evaluated again, SIGINT to the
       whole process group (a terminal's Ctrl-C): status 130, one line, no child left, and the
       last checkpoint restores into a freshly built agent with a larger replay. The run dir
       has the usual outputs plus the throughput and per-worker statistics.
    """
    out = tmp_path / "out"
    run_dir = out / "run_0"
    args = [*APEX_ARGS, *OVERRIDE, "--output_dir", out, "--train_steps", 1_000_000]
    (tmp_path / "crash").mkdir()
    crash = TrainProcess(
        [*args, "--max_actor_restarts", "1"],
        tmp_path / "crash",
        {"RL_TEST_RAISE_AFTER": "200", "RL_TEST_RAISE_IN_WORKER": "1"},
    )
    crash.wait_for(lambda: False, TIMEOUT)  # records the process tree until the exit
    assert crash.finish(timeout=60) == 1, crash.describe()
    lines = stderr_lines(crash.stderr)
    assert len(lines) == 1, crash.describe()
    line = lines[0]
    failure = "worker 1 failed: RuntimeError: injected failure after 200 steps (traceback: "
    assert line.startswith(f"train.py: {failure}"), line
    assert line.endswith("no restart left (--max_actor_restarts 1); the last checkpoint is intact")
    trace = Path(line.split("(traceback: ")[1].split(")")[0]).read_text()
    assert "raising_env.py" in trace and "injected failure" in trace, trace
    assert f"[run_0] {failure}" in crash.stdout and "; restarting it" in crash.stdout
    assert _trainer_state(run_dir)["actor_restarts"] == 1  # checkpointed after the restart
    assert len(crash.children) >= 4, crash.describe()  # Ray's processes and the actors did run
    assert not crash.orphans(), f"children alive after the exit: {crash.orphans()}"
    crashed_at = _pointer(run_dir)["step"]
    crashed_replay = _replay_size(run_dir)
    assert crashed_at > 0 and crashed_replay > 0

    (tmp_path / "resume").mkdir()
    resume = TrainProcess(args, tmp_path / "resume")

    def trained_on() -> bool:
        # A new checkpoint, and a row after the resume point in which both fresh actors had
        # reported: the learner goes on from the restored replay while the new actor processes
        # start (seconds of TF import under load), so the first rows can precede them.
        if _pointer(run_dir)["step"] <= crashed_at or not (run_dir / "progress.csv").exists():
            return False
        with open(run_dir / "progress.csv", newline="") as f:
            return any(
                int(r["env_steps"]) > crashed_at
                and r.get("worker_0_epsilon")
                and r.get("worker_1_epsilon")
                for r in csv.DictReader(f)
            )

    assert resume.wait_for(trained_on, TIMEOUT), resume.describe()
    resume.interrupt()
    assert resume.finish(timeout=60) == 130, resume.describe()
    assert stderr_lines(resume.stderr) == [
        "train.py: interrupted; the last checkpoint is intact"
    ], resume.describe()
    assert f"resuming from checkpoint at {crashed_at:,} env steps" in resume.stdout
    assert "Ape-X: 2 actors (epsilons 0.4, 0.000655)" in resume.stdout
    assert len(resume.children) >= 2
    assert not resume.orphans(), f"children alive after the exit: {resume.orphans()}"
    assert _pointer(run_dir)["step"] > crashed_at
    assert _restore_dqn(run_dir) > crashed_replay  # the restored replay kept growing

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["num_workers"] == 2
    with open(run_dir / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert int(rows[-1]["env_steps"]) > crashed_at
    assert all(float(r["steps_per_second"]) > 0 and float(r["replay_size"]) > 0 for r in rows)
    assert int(rows[-1]["actor_restarts"]) == 1  # the first run's, restored
    assert all(int(r["eval_episodes"]) == 2 for r in rows)
    # Ape-X epsilons 0.4^(1 + 7 * i / (2 - 1)) (float32 in the agent), in the rows written
    # once the worker had reported (past learning_starts=100: before it, epsilon is 1).
    for i, epsilon in enumerate([0.4, 0.4**8]):
        reported = [float(r[f"worker_{i}_epsilon"]) for r in rows if r[f"worker_{i}_epsilon"]]
        assert reported and reported[-1] == pytest.approx(epsilon, rel=1e-6), rows
    tags = _tags(run_dir / "train")
    for tag in (
        "time/steps_per_second",
        "time/updates_per_second",
        "workers/0/steps_per_second",
        "workers/1/epsilon",
        "workers/1/episodes",
        "workers/replay_size",
        "workers/restarts",
        "loss",
    ):
        assert tag in tags, sorted(tags)
    assert "return_mean" in _tags(run_dir / "eval")


def test_ppo_env_workers_give_the_single_process_results(trained_run, tmp_path):
    """ppo_tiny with its 2 env copies in 2 worker processes: same progress.csv (except wall
    time) and bit-identical final weights as the single-process run of the same seed."""
    reference_dir = trained_run("ppo_tiny")[0] / "run_0"
    out = tmp_path / "out"
    run = TrainProcess(
        ["--hparams", "ppo_tiny", "--num_workers", "2", "--output_dir", out], tmp_path
    )
    run.wait_for(lambda: False, TIMEOUT)
    assert run.finish(timeout=60) == 0, run.describe()
    assert len(run.children) >= 2 and not run.orphans()
    run_dir = out / "run_0"

    def rows(directory: Path) -> list[dict]:
        with open(directory / "progress.csv", newline="") as f:
            return [{k: v for k, v in r.items() if k != "wall_seconds"} for r in csv.DictReader(f)]

    assert rows(run_dir) == rows(reference_dir)

    def weights(directory: Path):
        prefix = directory / "checkpoints" / _pointer(directory)["directory"] / "tf"
        return tf.train.load_checkpoint(str(prefix))

    ours, reference = weights(run_dir), weights(reference_dir)
    names = sorted(ours.get_variable_to_shape_map())
    assert names == sorted(reference.get_variable_to_shape_map())
    for name in names:
        if name.startswith("_CHECKPOINTABLE_OBJECT_GRAPH"):
            continue
        np.testing.assert_array_equal(ours.get_tensor(name), reference.get_tensor(name), name)


def test_a_run_without_actors_never_imports_ray(tmp_path):
    """Ray is imported by the actors' engines only: `import rl` and a whole dqn_tiny run (in a
    fresh process, so no other test's import counts) leave it out of sys.modules."""
    script = (
        "import sys, rl, train\n"
        "assert 'ray' not in sys.modules, 'import rl'\n"
        f"assert train.main(['--hparams', 'dqn_tiny', '--output_dir', {str(tmp_path)!r}]) == 0\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'ray'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, env=train_env(), capture_output=True,
        text=True, timeout=TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]", done.stdout


@pytest.mark.slow  # a whole dqn_cartpole training (minutes on 2 busy cores)
def test_apex_dqn_cartpole_with_four_ray_actors_solves_cartpole(tmp_path):
    """dqn_cartpole with 4 Ape-X actors (epsilons 0.4 ... 0.4^8) reaches a greedy evaluation
    of 475 within the set's 50k env steps (the set stops at the first that does). Asynchronous
    actors are not reproducible, so this checks the outcome, not a step count."""
    out = tmp_path / "out"
    args = ["--hparams", "dqn_cartpole", "--num_workers", "4", "--output_dir", out]
    run = TrainProcess(args, tmp_path)
    run.wait_for(lambda: False, 1200)
    assert run.finish(timeout=60) == 0, run.describe()
    assert "reached stop_at_eval_return=475.0" in run.stdout, run.describe()
    assert not run.orphans(), f"children alive after the exit: {run.orphans()}"
