"""Chaos: a run killed at 20 moments in a row ends exactly where an uninterrupted run ends.

`kill -9` at random moments (half of them while a checkpoint is being written: the writer is
slowed by tests/chaos/slow_checkpoint_train.py, and the kill is sent when a temporary file of a
checkpoint write exists), each time followed by the same command, until a last one runs to the
end: the final checkpoint (every TF variable, the numpy state including the prioritized replay
and the n-step windows, the trainer counters) must equal an uninterrupted run's bit for bit
(dqn_tiny: prioritized replay + 3-step returns; ppo_tiny). The SIGTERM version checks that no
env step is ever lost: each stopped run's checkpoint is the step it says it stopped at, and the
next one resumes there.

Slow (several minutes on 2 cores: each of the 20 lives starts TensorFlow), so marked `slow`.
"""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from conftest import REPO_ROOT, default_signals, describe, run_train_process, train_env

from rl.errors import PREEMPTED_EXIT
from rl.utils.checkpoint import read_numpy_state

pytestmark = pytest.mark.slow

KILLS = 20
WRITE_DELAY = 0.3  # seconds each slowed atomic write pauses before its rename
SLOW_TRAIN = str(REPO_ROOT / "tests" / "chaos" / "slow_checkpoint_train.py")
WALL_CLOCK_KEYS = {"wall_seconds", "first_wall_at_threshold"}
SETS = {
    "dqn_tiny": "train_steps=4000,checkpoint_every=200,eval.every_steps=2000",
    "ppo_tiny": "train_steps=3072,checkpoint_every=256,eval.every_steps=1024",
}
STOPPED = re.compile(r"\[run_0\] SIGTERM: checkpoint at ([\d,]+) env steps")
RESUMED = re.compile(r"\[run_0\] resuming from checkpoint at ([\d,]+) env steps")


def _pointer_step(run_dir: Path) -> int:
    try:
        return json.loads((run_dir / "checkpoints" / "latest.json").read_text())["step"]
    except (FileNotFoundError, json.JSONDecodeError):
        return 0


def _writing(run_dir: Path) -> bool:
    """A checkpoint write is in progress: a temporary file of it exists."""
    try:
        return any((run_dir / "checkpoints").rglob("*.tmp"))
    except FileNotFoundError:  # a directory pruned while we looked
        return False


def _start(args: list[str], log: Path) -> subprocess.Popen:
    with open(log, "w") as f:
        return subprocess.Popen(
            [sys.executable, SLOW_TRAIN, str(WRITE_DELAY), *args],
            cwd=REPO_ROOT,
            env=train_env(),
            stdout=f,
            stderr=subprocess.STDOUT,
            preexec_fn=default_signals,
        )


def _wait(proc: subprocess.Popen, condition, timeout: float = 240.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if condition():
            return True
        time.sleep(0.005)
    raise AssertionError("condition not reached within the deadline")


def _moment(proc: subprocess.Popen, run_dir: Path, life: int, rng: random.Random) -> bool:
    """Waits for this life's kill moment; False if the run ended first."""
    if life % 2 == 0:  # a random moment, startup included
        deadline = time.monotonic() + rng.uniform(1.0, 12.0)
        return _wait(proc, lambda: time.monotonic() >= deadline)
    # After this life saved a checkpoint of its own, in the middle of its next write.
    start = _pointer_step(run_dir)
    return _wait(proc, lambda: _pointer_step(run_dir) > start) and _wait(
        proc, lambda: _writing(run_dir)
    )


def _final_state(run_dir: Path) -> tuple[dict, dict, dict]:
    pointer = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    step_dir = run_dir / "checkpoints" / pointer["directory"]
    reader = tf.train.load_checkpoint(str(step_dir / "tf"))
    variables = {
        k: reader.get_tensor(k)
        for k in reader.get_variable_to_shape_map()
        if k != "_CHECKPOINTABLE_OBJECT_GRAPH"
    }
    trainer = json.loads((step_dir / "trainer.json").read_text())
    trainer = {k: v for k, v in trainer.items() if k not in WALL_CLOCK_KEYS}
    return variables, read_numpy_state(str(step_dir)), trainer


def _assert_same(got: tuple, expected: tuple) -> None:
    for part, (ours, theirs) in enumerate(zip(got[:2], expected[:2], strict=True)):
        assert set(ours) == set(theirs), f"part {part}: {set(ours) ^ set(theirs)}"
        for name, value in theirs.items():
            np.testing.assert_array_equal(ours[name], value, err_msg=name)
    assert got[2] == expected[2]


@pytest.mark.parametrize("hparams_set", sorted(SETS))
def test_kill_9_twenty_times_equals_an_uninterrupted_run(tmp_path: Path, hparams_set: str):
    args = ["--hparams", hparams_set, "--hparam_override", SETS[hparams_set]]
    straight = run_train_process([*args, "--output_dir", str(tmp_path / "straight")], 600)
    assert straight.returncode == 0, describe(straight)
    output_dir = tmp_path / "chaos"
    run_dir = output_dir / "run_0"
    args += ["--output_dir", str(output_dir)]
    rng = random.Random(hparams_set)
    kills = mid_write = 0
    for life in range(KILLS):
        proc = _start(args, tmp_path / f"life_{life}.log")
        if not _moment(proc, run_dir, life, rng):
            break  # the run finished before this life's moment
        mid_write += _writing(run_dir)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        kills += 1
    last = _start(args, tmp_path / "last.log")
    assert last.wait(600) == 0, (tmp_path / "last.log").read_text()
    # Enough kills, many inside checkpoint writes, to mean something.
    assert kills >= KILLS - 2 and mid_write >= KILLS // 4, (kills, mid_write)
    _assert_same(_final_state(run_dir), _final_state(tmp_path / "straight" / "run_0"))
    # Nothing of a killed write is left over: every chunk is listed by a kept checkpoint.
    listed = set()
    for manifest in (run_dir / "checkpoints").glob("step_*/manifest.json"):
        listed |= set(json.loads(manifest.read_text())["chunks"])
    chunks = run_dir / "checkpoints" / "chunks"  # none if no array reached the chunk size
    on_disk = {p.name for p in chunks.iterdir()} if chunks.exists() else set()
    assert on_disk == listed


def test_sigterm_twenty_times_loses_no_step(tmp_path: Path):
    args = ["--hparams", "dqn_tiny", "--hparam_override", SETS["dqn_tiny"]]
    output_dir = tmp_path / "chaos"
    run_dir = output_dir / "run_0"
    args += ["--output_dir", str(output_dir)]
    rng = random.Random("sigterm")
    stops = 0
    for life in range(KILLS):
        log = tmp_path / f"life_{life}.log"
        proc = _start(args, log)
        if not _moment(proc, run_dir, life, rng):
            break
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(60)
        if status == 0 and _pointer_step(run_dir) == 4000:
            break  # it finished as the signal went out
        assert status == PREEMPTED_EXIT, log.read_text()
        out = log.read_text()
        stopped = [int(s.replace(",", "")) for s in STOPPED.findall(out)]
        if stopped:  # stopped while training: the checkpoint is where it stopped
            assert stopped == [_pointer_step(run_dir)], out
            stops += 1
    last_log = tmp_path / "last.log"
    last = _start(args, last_log)  # (already complete if a life finished it)
    assert last.wait(600) == 0, last_log.read_text()
    assert stops >= KILLS // 2
    assert _pointer_step(run_dir) == 4000
    # Every life resumed exactly where the one before had saved.
    logs = [tmp_path / f"life_{i}.log" for i in range(KILLS)] + [last_log]
    saved = 0
    for log in logs:
        if not log.exists():
            continue
        out = log.read_text()
        if "already complete" in out:  # the life before finished the run
            continue
        resumed = [int(s.replace(",", "")) for s in RESUMED.findall(out)]
        stopped = [int(s.replace(",", "")) for s in STOPPED.findall(out)]
        expected = [saved] if saved else []
        # A life stopped during startup (before it restored anything) says neither.
        assert resumed == expected or (not stopped and not resumed), (log.name, out)
        if stopped:
            saved = stopped[0]
