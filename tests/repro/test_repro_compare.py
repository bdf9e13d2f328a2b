"""rl/repro/compare.py on small hand-made checkpoints (CheckpointStore layout): what counts as a
difference, in which order the first one is found, and how it is described."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from rl.repro.compare import (
    Difference,
    array_difference,
    checkpoint_steps,
    first_difference,
    read_checkpoint,
)
from rl.utils.checkpoint import CheckpointStore

V_KEY = "model/w/.ATTRIBUTES/VARIABLE_VALUE"


class _Model(tf.Module):
    def __init__(self, w: list[float]) -> None:
        super().__init__()
        self.w = tf.Variable(w)


class _KerasLikeOptimizer(tf.Module):
    """Holds the weights under the attribute name a Keras optimizer uses."""

    def __init__(self, variables: list[tf.Variable]) -> None:
        super().__init__()
        self._trainable_variables = variables


def _save(
    run_dir,
    step: int = 10,
    w=(1.0, 2.0),
    replay=(1, 2, 3),
    trainer: dict | None = None,
    optimizer: bool = False,
) -> str:
    model = _Model(list(w))
    objects = {"model": model}
    if optimizer:  # as a Keras optimizer does: the weights are also in a list of its own, which
        # is the shorter path (optimizer/_trainable_variables/0 vs net/inner/model/w), so the key
        net, inner = tf.Module(), tf.Module()
        inner.model = model
        net.inner = inner
        objects = {"net": net, "optimizer": _KerasLikeOptimizer([model.w])}
    store = CheckpointStore(str(run_dir / "checkpoints"), keep=10)
    state = {"env_steps": step, "wall_seconds": 1.5, **(trainer or {})}
    numpy_state = {"replay": np.array(replay, np.int64)}
    return store.save(step, tf.train.Checkpoint(**objects), numpy_state, state)


def test_identical_checkpoints_have_no_difference(tmp_path):
    a = read_checkpoint(_save(tmp_path / "a"))
    b = read_checkpoint(_save(tmp_path / "b", trainer={"wall_seconds": 99.0}))  # wall clock
    assert first_difference(a, b) is None


def test_a_variable_difference_is_named_with_its_max_abs_difference(tmp_path):
    a = read_checkpoint(_save(tmp_path / "a", w=(1.0, 2.0)))
    b = read_checkpoint(_save(tmp_path / "b", w=(1.0, 2.5), replay=(1, 2, 4)))
    # Variables are compared before arrays: the replay differs too, the variable is named.
    assert first_difference(a, b) == Difference("variable", "model/w", "max abs difference 0.5")
    assert first_difference(a, b).describe() == "variable model/w (max abs difference 0.5)"


def test_an_array_difference_then_a_counter_difference(tmp_path):
    a = read_checkpoint(_save(tmp_path / "a"))
    b = read_checkpoint(_save(tmp_path / "b", replay=(1, 2, 7)))
    assert first_difference(a, b) == Difference("array", "replay", "max abs difference 4")
    c = read_checkpoint(_save(tmp_path / "c", trainer={"episodes": 3}))
    only_c = Difference("trainer.json key", "episodes", "only in the second")
    assert first_difference(a, c) == only_c
    d = read_checkpoint(_save(tmp_path / "d", trainer={"cuts": 1}))
    e = read_checkpoint(_save(tmp_path / "e", trainer={"cuts": 2}))
    assert first_difference(d, e) == Difference("trainer.json key", "cuts", "1 vs 2")
    assert first_difference(d, e, ignore_trainer_keys=frozenset({"cuts"})) is None


def test_a_variable_keyed_under_the_optimizer_gets_its_readable_name(tmp_path):
    a = read_checkpoint(_save(tmp_path / "a", optimizer=True))
    b = read_checkpoint(_save(tmp_path / "b", w=(1.0, 1.75), optimizer=True))
    key = "optimizer/_trainable_variables/0"
    assert f"{key}/.ATTRIBUTES/VARIABLE_VALUE" in a.variables  # the shorter path is the key
    assert first_difference(a, b) == Difference(
        "variable", "net/inner/model/w", f"max abs difference 0.25; checkpoint key {key}"
    )


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (np.array([1.0, np.nan]), np.array([1.0, np.nan]), None),
        (np.array([1.0, 2.0]), np.array([1.0, -2.0]), "max abs difference 4"),
        (np.array([1, 2], np.int32), np.array([1, 2], np.int64), "dtype int32 vs int64"),
        (np.zeros(2), np.zeros(3), "shape (2,) vs (3,)"),
        (np.array([True, False]), np.array([True, True]), "max abs difference 1"),
        (np.array(["a"]), np.array(["b"]), "values differ"),
    ],
)
def test_array_difference(a, b, expected):
    assert array_difference(a, b) == expected


def test_checkpoint_steps_skips_a_half_written_newer_step(tmp_path):
    _save(tmp_path, step=10)
    _save(tmp_path, step=20)
    leftover = tmp_path / "checkpoints" / "step_000000000030"
    leftover.mkdir()
    (leftover / "tf.index").write_text("garbage")
    assert list(checkpoint_steps(str(tmp_path))) == [10, 20]
    assert checkpoint_steps(str(tmp_path / "nothing_here")) == {}
