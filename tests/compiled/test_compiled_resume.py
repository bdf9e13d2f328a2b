"""Exact resume on the compiled path: N iterations straight vs N/2 + save + restore (into a
freshly built trainer) + N/2 end with every saved value bit-identical: weights, optimizer
slots, counters, the agent's generator, the envs' state and running episode statistics.

No episode is cut at the checkpoint: the env state is in it (rl/compiled/ppo_iteration.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import rl  # noqa: F401  (fills the registries)
from rl import registry
from rl.compiled import CompiledPPO
from rl.envs.tf import make_tf_env

ITERATIONS = 6


def _ppo() -> CompiledPPO:
    hp = registry.get_hparams("ppo_tf_tiny")()
    hp.jit_compile = True  # the set turns XLA off for the train.py smoke runs
    hp.freeze()
    return CompiledPPO(hp, make_tf_env(hp.env, max_episode_steps=hp.max_episode_steps), seed=3)


# Slow (~20 s of CPU): the default tier saves and restores compiled programs bit-exactly in
# test_compiled_dqn.py, test_ppo_seeds_iteration.py (CompiledPPO members) and, through
# train.py, test_copies_train_py.py.
@pytest.mark.slow
def test_save_restore_is_bit_identical_to_uninterrupted(tmp_path):
    straight = _ppo()
    for _ in range(ITERATIONS):
        straight.run_iteration()
    expected = straight.variables()

    first = _ppo()
    for _ in range(ITERATIONS // 2):
        first.run_iteration()
    path = first.checkpoint.write(str(tmp_path / "ckpt"))
    half = first.variables()

    resumed = _ppo()  # fresh weights and env state, then overwritten by the restore
    resumed.checkpoint.read(path).assert_consumed()
    restored = resumed.variables()
    assert restored.keys() == half.keys()
    for key in half:
        np.testing.assert_array_equal(restored[key], half[key], err_msg=key)
    for _ in range(ITERATIONS - ITERATIONS // 2):
        resumed.run_iteration()
    actual = resumed.variables()

    assert actual.keys() == expected.keys()
    assert any("generator" in k.lower() or "rng" in k.lower() for k in expected), sorted(expected)
    assert any("physics" in k for k in expected) and any("episode_return" in k for k in expected)
    for key in expected:
        np.testing.assert_array_equal(actual[key], expected[key], err_msg=key)
    assert int(resumed.agent.env_steps.numpy()) == ITERATIONS * resumed.steps_per_iteration
