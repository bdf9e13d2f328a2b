"""SIGTERM = checkpoint and go (rl/preemption.py): a real SIGTERM to a real train.py.

For each engine: the run exits 75 (retriable) with one stderr line, the checkpoint it wrote is
the step it stopped at (the stdout line says which), no child process is left, and the same
command resumes from exactly that step (no env step lost). A SIGTERM'd-and-resumed run equals an
uninterrupted one bit for bit, wherever the signal lands: a SIGTERM checkpoint keeps the running
episodes. tests/test_chaos.py repeats SIGTERM and kill -9 many times in a row.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from conftest import describe, run_train_process
from process_tools import TrainProcess

from rl.errors import PREEMPTED_EXIT
from rl.utils.checkpoint import read_numpy_state

STOPPED = re.compile(r"\[run_0\] SIGTERM: checkpoint at ([\d,]+) env steps")
RESUMED = re.compile(r"\[run_0\] resuming from checkpoint at ([\d,]+) env steps")
TIMEOUT = 300


def _pointer_step(run_dir: Path) -> int:
    try:
        return json.loads((run_dir / "checkpoints" / "latest.json").read_text())["step"]
    except (FileNotFoundError, json.JSONDecodeError):
        return -1


def _sigterm_after_first_checkpoint(args: list[str], tmp_path: Path) -> tuple[int, float]:
    """Starts train.py, sends SIGTERM once its first checkpoint exists; returns the step it
    says it stopped at and the seconds from the signal to its exit."""
    run_dir = Path(args[args.index("--output_dir") + 1]) / "run_0"
    proc = TrainProcess(args, tmp_path)
    assert proc.wait_for(lambda: _pointer_step(run_dir) > 0, TIMEOUT), proc.describe()
    sent = time.monotonic()
    proc.proc.send_signal(15)
    status = proc.finish(TIMEOUT)
    seconds = time.monotonic() - sent
    assert status == PREEMPTED_EXIT, proc.describe()
    assert proc.stderr.strip().splitlines() == [
        f"train.py: stopped by SIGTERM; every run saved a checkpoint (status {PREEMPTED_EXIT}): "
        "the same command continues it"
    ], proc.describe()
    assert not proc.orphans(), f"children left: {proc.orphans()}"
    (stopped,) = STOPPED.findall(proc.stdout)
    step = int(stopped.replace(",", ""))
    assert _pointer_step(run_dir) == step  # the checkpoint is where it stopped
    return step, seconds


def _resume(args: list[str], step: int) -> str:
    proc = run_train_process(args, timeout=TIMEOUT)
    assert proc.returncode == 0, describe(proc)
    assert [int(s.replace(",", "")) for s in RESUMED.findall(proc.stdout)] == [step]
    assert proc.stderr == "", describe(proc)
    return proc.stdout


def _final_state(run_dir: Path) -> tuple[dict, dict]:
    pointer = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    step_dir = run_dir / "checkpoints" / pointer["directory"]
    reader = tf.train.load_checkpoint(str(step_dir / "tf"))
    variables = {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map()}
    variables.pop("_CHECKPOINTABLE_OBJECT_GRAPH", None)
    return variables, read_numpy_state(str(step_dir))


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param([], id="in_process"),
        # Slow (~100 s on 2 busy cores): Ray and its actors start and stop twice.
        pytest.param(["--num_workers", "2"], id="apex_actors", marks=pytest.mark.slow),
    ],
)
@pytest.mark.e2e  # a real SIGTERM to a real train.py
def test_sigterm_checkpoints_where_it_stopped_and_resumes_there(tmp_path: Path, extra):
    # 3,000 steps: several seconds of training, so the signal comes long before the end.
    override = "train_steps=3000,checkpoint_every=300,eval.every_steps=1500"
    args = ["--hparams", "dqn_tiny", "--hparam_override", override, *extra]
    args += ["--output_dir", str(tmp_path / "out")]
    step, _ = _sigterm_after_first_checkpoint(args, tmp_path)
    assert step >= 300
    assert step < 3000
    _resume(args, step)


@pytest.mark.slow  # three 40k-step runs (~100 s on 2 busy cores)
def test_sigterm_then_resume_equals_an_uninterrupted_compiled_run(tmp_path: Path):
    override = ["--hparam_override", "train_steps=40000,checkpoint_every=512,eval.every_steps=8192"]
    straight = ["--hparams", "ppo_tf_tiny", *override, "--output_dir", str(tmp_path / "straight")]
    proc = run_train_process(straight, timeout=TIMEOUT)
    assert proc.returncode == 0, describe(proc)
    args = ["--hparams", "ppo_tf_tiny", *override, "--output_dir", str(tmp_path / "stopped")]
    step, _ = _sigterm_after_first_checkpoint(args, tmp_path)
    _resume(args, step)
    expected = _final_state(tmp_path / "straight" / "run_0")
    got = _final_state(tmp_path / "stopped" / "run_0")
    assert set(got[0]) == set(expected[0]) and set(got[1]) == set(expected[1])
    for name, value in expected[0].items():
        np.testing.assert_array_equal(got[0][name], value, err_msg=name)
    for name, value in expected[1].items():
        np.testing.assert_array_equal(got[1][name], value, err_msg=name)


# A replay agent with n-step data pending, and (slow tier: ~30 s) an off-policy continuous one
# with stateful action noise. The moment is what a process adds; which agent, the in-process
# tests/test_resume_every_agent.py covers: it stops every agent off the checkpoint schedule.
@pytest.mark.parametrize(
    "hparams_set", ["dqn_tiny", pytest.param("td3_tiny", marks=pytest.mark.slow)]
)
@pytest.mark.e2e  # a real SIGTERM to a real train.py, at no step chosen by the run
def test_sigterm_at_a_random_moment_then_resume_equals_an_uninterrupted_run(
    tmp_path: Path, hparams_set: str
):
    override = "train_steps=2000,checkpoint_every=500,eval.every_steps=1000"
    base = ["--hparams", hparams_set, "--seed", "21", "--hparam_override", override]
    straight = [*base, "--output_dir", str(tmp_path / "straight")]
    straight_run: list = []
    thread = threading.Thread(target=lambda: straight_run.append(run_train_process(straight)))
    thread.start()
    args = [*base, "--output_dir", str(tmp_path / "stopped")]
    proc = TrainProcess(args, tmp_path)
    assert proc.wait_for(lambda: "step " in proc.stdout_path.read_text(), TIMEOUT), proc.describe()
    delay = random.uniform(0.0, 2.0)
    time.sleep(delay)
    proc.proc.send_signal(15)
    status = proc.finish(TIMEOUT)
    thread.join()
    assert straight_run[0].returncode == 0, describe(straight_run[0])
    if status == 0:  # the signal came after the last step: nothing to resume
        pytest.skip(f"SIGTERM {delay:.2f} s after the first progress line came after the end")
    assert status == PREEMPTED_EXIT, proc.describe()
    (stopped,) = STOPPED.findall(proc.stdout)
    _resume(args, int(stopped.replace(",", "")))
    expected = _final_state(tmp_path / "straight" / "run_0")
    got = _final_state(tmp_path / "stopped" / "run_0")
    where = f"SIGTERM {delay:.2f} s after the first progress line, at {stopped} env steps"
    assert set(got[0]) == set(expected[0]) and set(got[1]) == set(expected[1]), where
    for name, value in expected[0].items():
        np.testing.assert_array_equal(got[0][name], value, err_msg=f"{name}; {where}")
    for name, value in expected[1].items():
        np.testing.assert_array_equal(got[1][name], value, err_msg=f"{name}; {where}")
