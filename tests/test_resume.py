"""A run killed at any moment resumes from its last checkpoint by running the same command again,
and (deterministic ops on CPU) ends bit-identical to a run that was never interrupted.

- test_kill_9_then_resume_is_bit_identical: SIGKILL a dqn_tiny-like run after its checkpoint at
  >= 1000 env steps, run the same command again, compare with an uninterrupted run: weights,
  optimizer slots, counters and generator state (every variable of the `tf` checkpoint), replay
  contents (numpy.npz), trainer counters and the progress.csv rows.
- test_resume_ignores_half_written_checkpoints: a run "killed while writing a checkpoint" (a
  step dir latest.json does not name, with garbage in it) resumes from latest.json.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from conftest import REPO_ROOT, TINY_SET, describe, train_command, train_env

from rl.utils.checkpoint import read_numpy_state

# e2e: kill -9 of a real train.py, and the same command run again as a process
pytestmark = pytest.mark.e2e

TRAIN_STEPS = 3000
KILL_AFTER_STEP = 1000
OVERRIDE = f"train_steps={TRAIN_STEPS},checkpoint_every=500,eval.every_steps=1000"
# Keys of trainer.json that measure time, not what was trained.
WALL_CLOCK_KEYS = {"wall_seconds", "first_wall_at_threshold"}


def _args(output_dir: Path) -> list[str]:
    return ["--hparams", TINY_SET, "--hparam_override", OVERRIDE, "--output_dir", str(output_dir)]


def _start(args: list[str], log: Path) -> subprocess.Popen:
    with open(log, "w") as f:  # a file, not a pipe: a full pipe would stall the child
        return subprocess.Popen(
            train_command(args), cwd=REPO_ROOT, env=train_env(), stdout=f, stderr=subprocess.STDOUT
        )


def _finish(proc: subprocess.Popen, log: Path, timeout: float = 300) -> str:
    proc.wait(timeout=timeout)
    output = log.read_text()
    assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}:\n{output}"
    return output


def _pointer(run_dir: Path) -> dict | None:
    try:
        return json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _wait_for_checkpoint(proc: subprocess.Popen, run_dir: Path, min_step: int) -> int:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        pointer = _pointer(run_dir)
        if pointer is not None and pointer["step"] >= min_step:
            return pointer["step"]
        if proc.poll() is not None:
            raise AssertionError(f"run exited ({proc.returncode}) before step {min_step}")
        time.sleep(0.01)
    raise AssertionError(f"no checkpoint at >= {min_step} env steps within the deadline")


def _checkpoint_dir(run_dir: Path) -> Path:
    pointer = _pointer(run_dir)
    assert pointer is not None, f"no latest.json in {run_dir}"
    return run_dir / "checkpoints" / pointer["directory"]


def _read_checkpoint(step_dir: Path) -> tuple[dict, dict, dict]:
    """(tf variables, numpy state, trainer state) of one checkpoint directory."""
    reader = tf.train.load_checkpoint(str(step_dir / "tf"))
    variables = {
        name: reader.get_tensor(name)
        for name in reader.get_variable_to_shape_map()
        if name != "_CHECKPOINTABLE_OBJECT_GRAPH"
    }
    numpy_state = read_numpy_state(str(step_dir))
    trainer_state = json.loads((step_dir / "trainer.json").read_text())
    return variables, numpy_state, trainer_state


def _progress_rows(run_dir: Path) -> list[list[str]]:
    """progress.csv rows without the wall_seconds column."""
    lines = (run_dir / "progress.csv").read_text().splitlines()
    header = lines[0].split(",")
    wall = header.index("wall_seconds")
    return [[v for i, v in enumerate(line.split(",")) if i != wall] for line in lines]


def _assert_same_final_checkpoint(resumed: Path, reference: Path, steps: int) -> None:
    """Both runs finished at `steps`, with bit-identical TF variables, numpy state, trainer
    counters (wall clock aside) and progress.csv rows (wall clock aside)."""
    assert _pointer(resumed)["step"] == _pointer(reference)["step"] == steps
    vars_a, numpy_a, state_a = _read_checkpoint(_checkpoint_dir(resumed))
    vars_b, numpy_b, state_b = _read_checkpoint(_checkpoint_dir(reference))

    assert state_a["env_steps"] == state_b["env_steps"] == steps
    assert {k: v for k, v in state_a.items() if k not in WALL_CLOCK_KEYS} == {
        k: v for k, v in state_b.items() if k not in WALL_CLOCK_KEYS
    }

    assert sorted(vars_a) == sorted(vars_b)
    assert len(vars_a) > 10  # weights, target weights, optimizer slots, counters, generator
    differ = [
        name
        for name in sorted(vars_a)
        if vars_a[name].dtype != vars_b[name].dtype
        or not np.array_equal(vars_a[name], vars_b[name])
    ]
    assert not differ, f"variables differ after resume: {differ}"

    assert sorted(numpy_a) == sorted(numpy_b)
    differ = [
        key
        for key in sorted(numpy_a)
        if numpy_a[key].dtype != numpy_b[key].dtype
        or not np.array_equal(numpy_a[key], numpy_b[key])
    ]
    assert not differ, f"numpy state (replay, priorities, RNG) differs after resume: {differ}"

    assert _progress_rows(resumed) == _progress_rows(reference)


def test_kill_9_then_resume_is_bit_identical(tmp_path):
    killed_dir, reference_dir = tmp_path / "killed", tmp_path / "reference"
    killed_run, reference_run = killed_dir / "run_0", reference_dir / "run_0"

    # The uninterrupted reference runs alongside the run that gets killed.
    reference = _start(_args(reference_dir), tmp_path / "reference.log")
    try:
        victim = _start(_args(killed_dir), tmp_path / "killed.log")
        try:
            _wait_for_checkpoint(victim, killed_run, KILL_AFTER_STEP)
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait(timeout=60)
        finally:
            if victim.poll() is None:
                victim.kill()
                victim.wait()
        assert victim.returncode == -signal.SIGKILL, (tmp_path / "killed.log").read_text()

        # The newest complete checkpoint is intact and readable after the kill.
        pointer = _pointer(killed_run)
        assert KILL_AFTER_STEP <= pointer["step"] < TRAIN_STEPS, pointer
        variables, numpy_state, trainer_state = _read_checkpoint(_checkpoint_dir(killed_run))
        assert variables and numpy_state
        assert trainer_state["env_steps"] == pointer["step"]

        resumed = _start(_args(killed_dir), tmp_path / "resumed.log")
        resumed_out = _finish(resumed, tmp_path / "resumed.log")
        _finish(reference, tmp_path / "reference.log")
    finally:
        if reference.poll() is None:
            reference.kill()
            reference.wait()

    assert f"resuming from checkpoint at {pointer['step']:,} env steps" in resumed_out, resumed_out
    manifest = json.loads((killed_run / "manifest.json").read_text())
    assert len(manifest.get("resumed", [])) == 1, manifest
    _assert_same_final_checkpoint(killed_run, reference_run, TRAIN_STEPS)


def test_resume_ignores_half_written_checkpoints(tmp_path, trained_run, run_train):
    """Turns a finished dqn_tiny run (checkpoints at 300 and 600) into one killed while writing
    its 600-step checkpoint: latest.json names step 300, the 600 dir holds garbage, and a stray
    step dir no pointer names sits beside them. The same command resumes from 300, rewrites
    600, and ends bit-identical to the original run."""
    source_dir, _, proc = trained_run(TINY_SET)
    assert proc.returncode == 0, describe(proc)
    reference_run = tmp_path / "reference" / "run_0"
    shutil.copytree(source_dir / "run_0", reference_run)
    run_dir = tmp_path / "out" / "run_0"
    shutil.copytree(source_dir / "run_0", run_dir)
    checkpoints = run_dir / "checkpoints"
    first = sorted(p.name for p in checkpoints.iterdir() if p.name.startswith("step_"))
    assert len(first) >= 2, first
    previous, last = first[-2], first[-1]
    previous_step = int(previous.split("_")[1])

    (checkpoints / "latest.json").write_text(
        json.dumps({"step": previous_step, "directory": previous})
    )
    for path in (checkpoints / last).iterdir():
        path.write_bytes(b"\x00garbage from a killed write")
    stray = checkpoints / "step_999999999999"
    stray.mkdir()
    (stray / "tf.index").write_bytes(b"garbage")
    (stray / "numpy.npz").write_bytes(b"garbage")

    resumed = run_train(["--hparams", TINY_SET, "--output_dir", run_dir.parent])
    assert resumed.returncode == 0, describe(resumed)
    assert f"resuming from checkpoint at {previous_step:,} env steps" in resumed.stdout
    pointer = _pointer(run_dir)
    assert pointer == _pointer(reference_run) and pointer["directory"] == last, pointer
    _assert_same_final_checkpoint(run_dir, reference_run, pointer["step"])
