"""train.py end to end: `--log_level DEBUG` per-update diagnostics (console and TensorBoard),
`--log_level WARNING`, and a reward augmentation that never reaches the reported returns.

One short run serves both: dqn_tiny on MountainCar-v0 with energy shaping and a 50-step time
limit. MountainCar pays -1 per step and cannot reach the flag in 50 steps from rest, so every
true episode return is exactly -50, while the shaped rewards the agent learns from are not
integers: a -50.0 in progress.csv proves the reports use the env's own reward.
"""

from __future__ import annotations

import csv
import io
import logging
import re

import numpy as np
import pytest
import tensorflow as tf
from conftest import describe

import train
from rl.utils.logger import ConsoleSink

DIAGNOSTIC = re.compile(
    r"^DEBUG rl\.agents\.diagnostics: gradient step (\d+): loss (\S+) -> (\S+) on the same batch"
)


# The run goes to the session's trainer process (tests/tiny_trainer.py: real file descriptors,
# as a train.py process has them, without a TensorFlow import of its own).
TRAINED_SET = None


@pytest.fixture(scope="module")
def debug_run(tmp_path_factory, trained_run):
    output_dir = tmp_path_factory.mktemp("debug_shaping") / "out"
    overrides = (
        "env=MountainCar-v0,max_episode_steps=50,reward_augmentation=mountain_car_energy,"
        "reward_augmentation_kwargs={'scale': 10.0},jit_compile=False"
    )
    args = ["--hparams", "dqn_tiny", "--hparam_override", overrides, "--log_level", "debug"]
    proc = trained_run.start([*args, "--output_dir", output_dir]).result(300)
    assert proc.returncode == 0, describe(proc)
    return output_dir / "run_0", proc


def _scalars(event_dir, prefix: str) -> dict[str, list[tuple[int, float]]]:
    out: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(event_dir.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag.startswith(prefix):
                    scalar = float(tf.make_ndarray(value.tensor))
                    out.setdefault(value.tag, []).append((event.step, scalar))
    return out


def test_eval_and_training_returns_are_the_true_env_returns(debug_run):
    run_dir, _ = debug_run
    with open(run_dir / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["env_steps"]) for r in rows] == [300, 600]
    for row in rows:
        assert float(row["eval_return_mean"]) == -50.0 and float(row["eval_return_std"]) == 0.0
        assert float(row["train_return_mean"]) == -50.0
    returns = _scalars(run_dir / "train", "episode_return")["episode_return"]
    assert returns and all(value == -50.0 for _, value in returns)


def test_debug_prints_and_writes_per_update_diagnostics(debug_run):
    run_dir, proc = debug_run
    lines = [m for m in map(DIAGNOSTIC.match, proc.stderr.splitlines()) if m]
    # dqn_tiny updates every 50 env steps from learning_starts=100 to 600: 11 updates.
    assert len(lines) == 11, proc.stderr
    steps = [int(m.group(1)) for m in lines]
    assert steps == [4 * (i + 1) for i in range(11)]  # gradient_steps=4 per update
    for match in lines:
        assert np.isfinite(float(match.group(2))) and np.isfinite(float(match.group(3)))
    scalars = _scalars(run_dir / "train", "debug/")
    assert set(scalars) == {
        "debug/loss_before",
        "debug/loss_after",
        "debug/loss_change",
        "debug/grad_norm",
        "debug/improved_fraction",
    }
    before = dict(scalars["debug/loss_before"])
    assert len(before) == 11  # one point per update, at its env step
    logged = [float(m.group(2)) for m in lines]
    np.testing.assert_allclose([before[s] for s in sorted(before)], logged, rtol=1e-4)


def test_bad_log_level_is_one_line_error(capsys, tmp_path):
    code = train.main(
        ["--hparams", "dqn_tiny", "--output_dir", str(tmp_path), "--log_level", "loud"]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--log_level" in err[0] and "DEBUG" in err[0]
    assert not any(tmp_path.iterdir())


def test_warning_level_hides_the_progress_line():
    logger = logging.getLogger("rl")
    level = logger.level
    try:
        for setting, expected_lines in ((logging.WARNING, 0), (logging.INFO, 1)):
            logger.setLevel(setting)
            stream = io.StringIO()
            ConsoleSink(100, "run_0", stream=stream).write({"eval/return_mean": 1.0}, 100)
            assert len(stream.getvalue().splitlines()) == expected_lines
    finally:
        logger.setLevel(level)
