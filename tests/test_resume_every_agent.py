"""Exact resume for every agent family: a run stopped at a checkpoint and continued equals
an uninterrupted one bit for bit (tests/test_resume.py does the `kill -9` version for DQN).

This caught critics that were silently missing from checkpoints (layers kept in a Python list
inside a Keras model are invisible to tf.train.Checkpoint).
"""

import json

import numpy as np
import pytest
import tensorflow as tf

from rl.utils.checkpoint import read_numpy_state

# (set, env steps per iteration): iterations, checkpoints and the stop point must line up, so
# that the stop point is also a checkpoint (and an episode cut) of the straight run. cmaes_tiny:
# checkpoints (2 iterations) must fit a whole episode per env copy: 160 >= 4 envs x 20 + 80.
SETS = [
    ("ppo_tiny", 128),
    ("sac_tiny", 50),
    ("td3_tiny", 50),
    ("cmaes_tiny", 80),
    ("maddpg_tiny", 50),
    ("ppo_recurrent_tiny", 64),  # rollout states and the carried RNN state
    ("drqn_tiny", 50),  # sequence replay with unfinished windows, RNN state
    ("offpac_tiny", 64),  # trajectory-segment replay with its sampler RNG, partial segment
    ("impala_tiny", 32),  # unrolls with behaviour log-probs, minibatch RNG over env copies
]


def final_checkpoint(run_dir):
    checkpoints = run_dir / "run_0" / "checkpoints"
    pointer = json.loads((checkpoints / "latest.json").read_text())
    directory = checkpoints / pointer["directory"]
    reader = tf.train.load_checkpoint(str(directory / "tf"))
    variables = {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map()}
    arrays = read_numpy_state(str(directory))
    return pointer["step"], variables, arrays


@pytest.mark.parametrize(("hparams_set", "iteration"), SETS)
def test_stop_and_continue_equals_straight_run(
    tmp_path, run_train, run_train_concurrently, hparams_set, iteration
):
    every, stop, total = 2 * iteration, 4 * iteration, 8 * iteration
    override = f"checkpoint_every={every},eval.every_steps={every},train_every={iteration}"
    base = ["--hparams", hparams_set, "--hparam_override", override]
    straight, split = tmp_path / "straight", tmp_path / "split"
    # The straight run and the first half of the split one are independent: run them together.
    for proc in run_train_concurrently(
        [
            [*base, "--output_dir", str(straight), "--train_steps", str(total)],
            [*base, "--output_dir", str(split), "--train_steps", str(stop)],
        ],
        timeout=300,
    ):
        assert proc.returncode == 0, proc.stderr[-2000:]
    proc = run_train([*base, "--output_dir", str(split), "--train_steps", str(total)], timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"resuming from checkpoint at {stop}" in proc.stdout
    step_a, vars_a, arrays_a = final_checkpoint(straight)
    step_b, vars_b, arrays_b = final_checkpoint(split)
    assert step_a == step_b == total
    assert vars_a.keys() == vars_b.keys() and arrays_a.keys() == arrays_b.keys()
    for key in vars_a:
        np.testing.assert_array_equal(vars_a[key], vars_b[key], err_msg=key)
    for key in arrays_a:
        np.testing.assert_array_equal(arrays_a[key], arrays_b[key], err_msg=key)
