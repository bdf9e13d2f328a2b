"""PPO's `target_kl` on the compiled path: the XLA iteration stops its update at the
hand-computed step, leaving everything as the steps taken left it, and `--copies` with target_kl
trains the seeds as separate programs, each stopping alone.

ppo_tf_tiny: 4 envs x 16 steps = 64 samples, batch 32, 2 epochs = 4 gradient steps per
iteration without the stop. With lr 1e-2 and target_kl 1e-5 the first check sees the collecting
weights (KL ~0, float noise) and one Adam step moves the policy far past 1.5e-5 in KL, so every
iteration takes exactly one gradient step (tests/agents/test_ppo_target_kl.py has the same case
for the Python-env agent).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorflow as tf
from compiled_fixtures import frozen_hparams, tf_env
from conftest import describe, stderr_lines

from rl.compiled import CompiledPPO, CompiledPPOSeeds
from rl.compiled.stacked_variables import NotStackable

TINY = "ppo_tf_tiny"


def _hparams(**overrides):
    # jit_compile: the set turns XLA off for the train.py smoke runs
    return frozen_hparams(TINY, **{"jit_compile": True, **overrides})


_env = tf_env


def test_compiled_stop_equals_one_epoch_without_a_limit():
    # One 64-sample minibatch per epoch: epoch 1's step runs, epoch 2's check stops; the run
    # then equals a 1-epoch run without target_kl (same rollout, permutation and step), and
    # the skipped steps changed nothing (weights, Adam slots, counters, generator, envs).
    stopped_hp = _hparams(lr=1e-2, target_kl=1e-5, batch_size=64, n_epochs=3)
    plain_hp = _hparams(lr=1e-2, batch_size=64, n_epochs=1)
    stopped = CompiledPPO(stopped_hp, _env(stopped_hp), seed=0)
    plain = CompiledPPO(plain_hp, _env(plain_hp), seed=0)
    metrics = stopped.run_iteration()
    plain.run_iteration()
    assert metrics["update_steps"] == 1.0
    assert int(stopped.agent.learner.gradient_steps.numpy()) == 1
    a, b = stopped.variables(), plain.variables()
    assert a.keys() == b.keys()
    generator = [k for k in a if "generator" in k]
    assert generator
    for key in a:
        if key in generator:  # the stopped run drew epoch 2's permutation before its check
            assert not np.array_equal(a[key], b[key])
        else:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_multi_seed_program_leaves_target_kl_to_single_seed_programs():
    hp = _hparams(target_kl=0.01)
    with pytest.raises(NotStackable, match="target_kl"):
        CompiledPPOSeeds(hp, _env(hp), [0, 1])


# Slow (a train.py process, ~20 s): the default tier checks the stop itself (above) and that a
# multi-seed program refuses target_kl, which is why copies run as single-seed programs.
@pytest.mark.slow
def test_copies_with_target_kl_each_stop_on_their_own(tmp_path, run_train):
    out = tmp_path / "out"
    proc = run_train(
        [
            "--hparams",
            TINY,
            "--output_dir",
            out,
            "--copies",
            "2",
            "--hparam_override",
            "lr=1e-2,target_kl=1e-5",
        ]  # fmt: skip
    )
    assert proc.returncode == 0, describe(proc)
    assert stderr_lines(proc.stderr) == []
    for i in range(2):
        run_dir = out / f"run_{i}"
        pointer = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
        prefix = str(run_dir / "checkpoints" / pointer["directory"] / "tf")
        # 256 env steps = 4 iterations of one gradient step each (16 without the limit), and
        # the optimizer took exactly those steps (Adam's own counter).
        for name in ("agent/learner/gradient_steps", "agent/learner/optimizer/_iterations"):
            value = tf.train.load_variable(prefix, f"{name}/.ATTRIBUTES/VARIABLE_VALUE")
            assert int(value) == 4, (i, name)
