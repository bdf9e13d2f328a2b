"""`train.py --copies N` on a TF-ops env: the copies train as one program, each in its own run
dir; stop/continue equals an uninterrupted run bit for bit; complete copies are left alone and
the others train as a group (copies are grouped by the step they resume at).

The uninterrupted reference is the `--copies 2` ppo_tf_tiny run that tests/test_train_smoke.py
also checks (the session-wide `trained_run` fixture): seeds 0 and 1, 256 env steps.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import tensorflow as tf
from conftest import describe

TRAINED_SET = "ppo_tf_tiny"


def _final_checkpoint(run_dir) -> dict[str, np.ndarray]:
    pointer = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    prefix = str(run_dir / "checkpoints" / pointer["directory"] / "tf")
    return {
        name: tf.train.load_variable(prefix, name)
        for name, _ in tf.train.list_variables(prefix)
        if name != "_CHECKPOINTABLE_OBJECT_GRAPH"
    }


def test_copies_resume_exactly_and_new_copies_train_as_a_group(tmp_path, train_here, trained_run):
    reference_dir, _, reference = trained_run(TRAINED_SET)
    assert reference.returncode == 0, describe(reference)

    out = tmp_path / "out"
    args = ["--hparams", TRAINED_SET, "--output_dir", out, "--copies", "2"]
    first = train_here(args + ["--train_steps", "128"])
    assert first.returncode == 0, describe(first)
    second = train_here(args)  # train_steps back to the set's 256
    assert second.returncode == 0, describe(second)
    for i in range(2):
        assert f"[run_{i}] resuming from checkpoint at 128 env steps" in second.stdout
        manifest = json.loads((out / f"run_{i}" / "manifest.json").read_text())
        assert manifest["seed"] == i and manifest["copy_index"] == i
        assert len(manifest["resumed"]) == 1
        rows = list(csv.DictReader(open(out / f"run_{i}" / "progress.csv")))
        assert [int(r["env_steps"]) for r in rows] == [128, 256], i
        # Interrupted == uninterrupted, bit for bit (weights, Adam slots, generator, envs).
        expected = _final_checkpoint(reference_dir / f"run_{i}")
        actual = _final_checkpoint(out / f"run_{i}")
        assert expected.keys() == actual.keys()
        assert any("physics" in k for k in expected) and any("generator" in k for k in expected)
        for key in expected:
            np.testing.assert_array_equal(actual[key], expected[key], err_msg=f"run_{i} {key}")

    third = train_here(["--hparams", TRAINED_SET, "--output_dir", out, "--copies", "3"])
    assert third.returncode == 0, describe(third)
    assert "[run_0] already complete at 256 env steps" in third.stdout
    assert "[run_1] already complete at 256 env steps" in third.stdout
    rows = list(csv.DictReader(open(out / "run_2" / "progress.csv")))
    assert [int(r["env_steps"]) for r in rows] == [128, 256]
    assert json.loads((out / "run_2" / "manifest.json").read_text())["seed"] == 2
    for i in range(2):  # the complete copies were not touched
        assert _final_checkpoint(out / f"run_{i}").keys() == expected.keys()
        np.testing.assert_array_equal(
            _final_checkpoint(out / f"run_{i}")["env/physics/.ATTRIBUTES/VARIABLE_VALUE"],
            _final_checkpoint(reference_dir / f"run_{i}")["env/physics/.ATTRIBUTES/VARIABLE_VALUE"],
        )
