"""Many seeds in one program (`CompiledPPOSeeds`) are S independent runs:

- seed s of a joint run ends where the single-seed `CompiledPPO` run of seed s ends (every
  checkpoint value: integers exactly, floats to float32 rounding of batched vs plain matmuls),
  with the batched passes (discrete CartPole) and with each seed's own code (Gaussian Pendulum);
- changing one seed changes nothing of the others, bit for bit;
- the joint greedy evaluation equals each seed's own;
- saving every seed's checkpoint, restoring into a fresh joint program and continuing equals
  running straight through, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from compiled_fixtures import assert_same_run, frozen_hparams, tf_env

from rl.compiled import CompiledPPO, CompiledPPOSeeds

ITERATIONS = 3


def _hparams(**overrides):
    # jit_compile: the set turns XLA off for the train.py smoke runs
    return frozen_hparams("ppo_tf_tiny", **{"jit_compile": True, **overrides})


_env = tf_env


def _assert_same_run(joint: dict, single: dict) -> None:
    assert_same_run(joint, single, rtol=1e-4, atol=1e-6)


@pytest.fixture(scope="module")
def joint_runs(request, tmp_path_factory):
    """Joint runs of seeds (3, 4, 5) and, when a selected test reads it, (3, 9, 5), ITERATIONS
    iterations each; the first also saves every seed's checkpoint after its first iteration."""
    hp = _hparams()
    runs, paths = {}, []
    names = {item.name for item in request.session.items if item.module is request.module}
    second = "test_changing_one_seed_leaves_the_others_bit_identical" in names
    for seeds in ((3, 4, 5), (3, 9, 5)) if second else ((3, 4, 5),):
        joint = CompiledPPOSeeds(hp, _env(hp), list(seeds))
        metrics = [joint.run_iteration()]
        if not paths:
            joint.store_to_members()
            scratch = tmp_path_factory.mktemp("seeds")
            paths = [m.checkpoint.write(str(scratch / str(i))) for i, m in enumerate(joint.members)]
        metrics += [joint.run_iteration() for _ in range(ITERATIONS - 1)]
        runs[seeds] = (joint, metrics)
    return hp, runs, paths


def test_seed_of_a_joint_run_equals_its_single_run(joint_runs):
    hp, runs, _ = joint_runs
    joint, joint_metrics = runs[(3, 4, 5)]
    assert joint.batched and joint.forward is not None  # the batched passes are under test
    assert joint.iteration.experimental_get_tracing_count() == 1
    single = CompiledPPO(hp, _env(hp), seed=4)
    single_metrics = [single.run_iteration() for _ in range(ITERATIONS)]
    _assert_same_run(joint.variables(1), single.variables())
    for joint_m, single_m in zip(joint_metrics, single_metrics, strict=True):
        assert joint_m[1].keys() == single_m.keys()
        for key in single_m:
            np.testing.assert_allclose(joint_m[1][key], single_m[key], rtol=1e-4, atol=1e-6)
    # Greedy evaluation: seed 4's envs reset with seed 11 play what the single run plays.
    returns, lengths = joint.evaluate([10, 11, 12], num_envs=3)[1]
    single_returns, single_lengths = single.evaluate(11, num_envs=3)
    np.testing.assert_array_equal(returns, single_returns)
    np.testing.assert_array_equal(lengths, single_lengths)
    assert int(joint.agents[1].env_steps.numpy()) == ITERATIONS * single.steps_per_iteration


# Slow (a second joint program, ~6 s of CPU), as is the restore below (~10 s): the default tier
# checks seed independence through the equality with single runs above, and joint save/restore
# through train.py (test_copies_train_py.py resumes a `--copies 2` group bit-exactly).
@pytest.mark.slow
def test_changing_one_seed_leaves_the_others_bit_identical(joint_runs):
    _, runs, _ = joint_runs
    a, a_metrics = runs[(3, 4, 5)]
    b, b_metrics = runs[(3, 9, 5)]
    for s in (0, 2):  # seeds 3 and 5 in both runs
        va, vb = a.variables(s), b.variables(s)
        for key in va:
            np.testing.assert_array_equal(va[key], vb[key], err_msg=key)
        assert [m[s] for m in a_metrics] == [m[s] for m in b_metrics]
    va, vb = a.variables(1), b.variables(1)  # seeds 4 and 9: different runs
    changed = [k for k in va if not np.array_equal(va[k], vb[k])]
    assert any("physics" in k for k in changed) and any("generator" in k for k in changed)


# Slow (~25 s of CPU: two more programs compiled): the per-seed code path of Gaussian policies.
# The default tier checks the batched one above; both share the seeds' stacking and restore.
@pytest.mark.slow
def test_gaussian_policies_use_each_seeds_own_code_and_match_too():
    hp = _hparams(env="tf/Pendulum-v1", max_episode_steps=40)
    joint = CompiledPPOSeeds(hp, _env(hp), [1, 2])
    assert not joint.batched  # acting/advantages per seed (each reads its own log-std)
    single = CompiledPPO(hp, _env(hp), seed=2)
    for _ in range(2):
        joint.run_iteration()
        single.run_iteration()
    _assert_same_run(joint.variables(1), single.variables())


@pytest.mark.slow
def test_joint_save_restore_continues_bit_identically(joint_runs):
    hp, runs, paths = joint_runs
    straight, _ = runs[(3, 4, 5)]
    resumed = CompiledPPOSeeds(hp, _env(hp), [3, 4, 5])  # fresh weights, then restored
    for member, path in zip(resumed.members, paths, strict=True):
        member.checkpoint.read(path).assert_consumed()
    resumed.load_from_members()
    for _ in range(ITERATIONS - 1):
        resumed.run_iteration()
    for s in range(3):
        expected, actual = straight.variables(s), resumed.variables(s)
        assert expected.keys() == actual.keys()
        assert any("optimizer" in k for k in expected)  # Adam slots went through the stack
        for key in expected:
            np.testing.assert_array_equal(actual[key], expected[key], err_msg=key)
