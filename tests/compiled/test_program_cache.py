"""A tuner's later batch of trials trains in its first batch's population program
(`rl.engines.compiled.ProgramCache`): no new trace, and every member ends exactly where the same
trials end as the first batch of a fresh program (bit-identical: the same program from the same
initial state, so nothing may differ; state left over from the first batch would show here).
"""

from __future__ import annotations

import csv
import os

import numpy as np
import pytest
import tensorflow as tf
from compiled_fixtures import frozen_hparams

from rl import training
from rl.engines.compiled import ProgramCache
from rl.utils.checkpoint_choice import select_checkpoint

SEEDS = [3, 4, 5]  # one seed per trial (the tuner's repeat, [0, 0, ...]), here distinct
FIRST = [dict(lr=1e-3, ent_coef=0.0, gamma=0.99), dict(lr=3e-3, ent_coef=0.01, gamma=0.95),
         dict(lr=2e-3, ent_coef=0.03, gamma=0.9)]  # fmt: skip
# Its first two members share lr, so its varying keys come in another order: the same program.
SECOND = [dict(lr=5e-4, ent_coef=0.02, gamma=0.97), dict(lr=5e-4, ent_coef=0.001, gamma=0.9),
          dict(lr=1e-3, ent_coef=0.01, gamma=0.99)]  # fmt: skip


def _hparams(jit_compile: bool, **values):
    # The budget: one iteration of 64 env steps, and an evaluation.
    return frozen_hparams("ppo_tf_tiny", jit_compile=jit_compile, train_steps=64, **values)


def _train(batch: list[dict], out: str, programs: ProgramCache, jit_compile: bool) -> list:
    """Trains `batch` (trial values) as one population; each run's final checkpoint values and
    its evaluation returns."""
    members = [_hparams(jit_compile, **values) for values in batch]
    run_dirs = [os.path.join(out, f"run_{i}") for i in range(len(members))]
    base = _hparams(jit_compile)
    training.train(base, run_dirs, SEEDS, "ppo_tf_tiny", run_hparams=members, programs=programs)
    finals = []
    for run_dir in run_dirs:
        store, pointer = select_checkpoint(run_dir, "latest")
        path = os.path.join(store.directory, pointer["directory"], "tf")
        names = [name for name, _ in tf.train.list_variables(path)]
        # Every value; not the object graph, whose Keras layer names count the process's models.
        values = {name: tf.train.load_variable(path, name) for name in names if name[0] != "_"}
        with open(os.path.join(run_dir, "progress.csv")) as f:
            values["eval_returns"] = [row["eval_return_mean"] for row in csv.DictReader(f)]
        finals.append(values)
    return finals


@pytest.mark.parametrize(
    "jit_compile",
    [False, pytest.param(True, marks=pytest.mark.slow)],  # XLA: ~30 s, its compiles
)
def test_a_later_batch_reuses_the_program_and_ends_as_a_fresh_one(tmp_path, jit_compile):
    programs = ProgramCache()
    first = _train(FIRST, str(tmp_path / "first"), programs, jit_compile)
    (group, _, _), = programs.programs.values()  # fmt: skip
    reused = _train(SECOND, str(tmp_path / "reused"), programs, jit_compile)
    assert len(programs.programs) == 1
    assert group.iteration.experimental_get_tracing_count() == 1  # no second trace
    fresh = _train(SECOND, str(tmp_path / "fresh"), ProgramCache(), jit_compile)
    for reused_run, fresh_run in zip(reused, fresh, strict=True):
        assert reused_run.keys() == fresh_run.keys()
        for key in fresh_run:
            np.testing.assert_array_equal(reused_run[key], fresh_run[key], err_msg=key)
    # The second batch's agents log their own lr (train/learning_rate), not the first's ...
    lrs = [member.agent.metrics()["train/learning_rate"] for member in group.members]
    np.testing.assert_allclose(lrs, [5e-4, 5e-4, 1e-3])
    # ... and the members trained: their weights moved, to elsewhere than the first batch's.
    kernels = [key for key in first[0] if "_trainable_variables" in key]
    assert kernels and all(not np.array_equal(first[0][k], reused[0][k]) for k in kernels)
