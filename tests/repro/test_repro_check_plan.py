"""rl/repro/check.py without training: how far and how often the reruns checkpoint, and which
comparison names a difference (the two reruns, or the run dir), on hand-made checkpoints."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from rl import registry
from rl.errors import UserError
from rl.repro.check import Plan, _first_difference, plan
from rl.repro.compare import Difference
from rl.repro.run_info import read_run
from rl.utils.checkpoint import CheckpointStore
from rl.utils.run_dir import manifest, write_run_files


def _run_dir(root, hparams_set: str, override: str = ""):
    hp = registry.get_hparams(hparams_set)()
    hp.override(override)
    hp.freeze()
    write_run_files(str(root), hp, manifest(0, 0, hparams_set))
    return read_run(str(root))


def _save(run_dir, step: int, w: float = 1.0, evaluations: int = 1) -> None:
    store = CheckpointStore(str(run_dir / "checkpoints"), keep=10)
    trainer = {"env_steps": step, "evaluations": evaluations, "wall_seconds": 0.0}
    checkpoint = tf.train.Checkpoint(w=tf.Variable([w]))
    store.save(step, checkpoint, {"replay": np.zeros(2)}, trainer)


@pytest.mark.parametrize(
    "hparams_set, override, steps, expected",
    [
        # dqn_tiny: train_steps 600, checkpoint_every 300
        ("dqn_tiny", "", None, Plan(600, 300, compare_run_dir=True)),
        ("dqn_tiny", "checkpoint_every=100", None, Plan(200, 100, compare_run_dir=True)),
        ("dqn_tiny", "", 20_000, Plan(20_000, 300, compare_run_dir=True)),
        # no checkpoint before step 200 here or in the (empty) run dir: four in the stretch
        ("dqn_tiny", "", 200, Plan(200, 50, compare_run_dir=False)),
        ("dqn_tiny", "checkpoint_every=10000", None, Plan(600, 150, compare_run_dir=False)),
        ("ppo_tiny", "", None, Plan(256, 128, compare_run_dir=True)),
        ("ppo_tiny", "", 3, Plan(3, 1, compare_run_dir=False)),
    ],
)
def test_plan(tmp_path, hparams_set, override, steps, expected):
    assert plan(_run_dir(tmp_path, hparams_set, override), steps) == expected


def test_plan_keeps_the_spacing_when_the_run_dir_has_a_checkpoint_to_compare(tmp_path):
    run = _run_dir(tmp_path, "dqn_tiny", "checkpoint_every=10000")
    _save(tmp_path, 600)  # the run's last checkpoint
    assert plan(run, None) == Plan(600, 10_000, compare_run_dir=True)


def test_plan_refuses_steps_below_one(tmp_path):
    with pytest.raises(UserError, match=r"^--steps must be >= 1, got 0$"):
        plan(_run_dir(tmp_path, "dqn_tiny"), 0)


def _dirs(tmp_path, name: str, values: dict[int, float], evaluations: int = 1) -> dict[int, str]:
    for step, w in values.items():
        _save(tmp_path / name, step, w, evaluations)
    return {step: str(tmp_path / name / "checkpoints" / f"step_{step:012d}") for step in values}


def test_the_reruns_are_compared_first_then_the_run_dir(tmp_path):
    a = _dirs(tmp_path, "a", {100: 1.0, 200: 2.0})
    b = _dirs(tmp_path, "b", {100: 1.0, 200: 2.0})
    original = _dirs(tmp_path, "run", {100: 1.0, 200: 2.25})
    step, difference, between = _first_difference([100, 200], a, b, original, False)
    assert (step, between) == (200, "the run dir")
    assert difference == Difference("variable", "w", "max abs difference 0.25")

    c = _dirs(tmp_path, "c", {100: 1.5, 200: 2.0})
    assert _first_difference([100, 200], a, c, original, False) == (
        100,
        Difference("variable", "w", "max abs difference 0.5"),
        "the two reruns",
    )


def test_an_extra_evaluation_at_the_reruns_last_step_is_not_a_difference(tmp_path):
    a = _dirs(tmp_path, "a", {200: 1.0}, evaluations=2)
    b = _dirs(tmp_path, "b", {200: 1.0}, evaluations=2)
    original = _dirs(tmp_path, "run", {200: 1.0}, evaluations=1)
    assert _first_difference([200], a, b, original, last_step_extra_eval=True) is None
    assert _first_difference([200], a, b, original, last_step_extra_eval=False) == (
        200,
        Difference("trainer.json key", "evaluations", "1 vs 2"),
        "the run dir",
    )
