"""A population (`rl.compiled.population`): members whose hparams differ in lr, ent_coef,
clip_range, gamma, gae_lambda, vf_coef and max_grad_norm train in ONE program, and member s
ends where a single-seed run of its own hparams ends (every checkpoint value; floats to float32
rounding: batched vs plain matmuls, and the lr applied as a scale of a unit-lr update).
"""

from __future__ import annotations

import numpy as np
import pytest
from compiled_fixtures import assert_same_run, frozen_hparams, tf_env

from rl.compiled import CompiledPPO, CompiledPPOSeeds
from rl.compiled.population import check_members, varying_keys
from rl.errors import UserError

ITERATIONS = 3
# Three members: every population key differs between them. A tiny run's policy moves less than
# 1% per update (approx KL ~1e-5), so only member 2's clip_range is small enough to clip: that a
# member's clip_range reaches its loss is seen at all (a tiny run never clips at 0.1-0.3).
MEMBERS = (
    dict(lr=1e-3, ent_coef=0.0, clip_range=0.2, gamma=0.99, gae_lambda=0.95, vf_coef=0.5,
         max_grad_norm=0.5),
    dict(lr=3e-4, ent_coef=0.01, clip_range=0.1, gamma=0.95, gae_lambda=0.8, vf_coef=1.0,
         max_grad_norm=5.0),
    dict(lr=2e-3, ent_coef=0.001, clip_range=0.002, gamma=0.999, gae_lambda=1.0, vf_coef=0.2,
         max_grad_norm=1.0),
)  # fmt: skip


def _hparams(**overrides):
    # jit_compile: the set turns XLA off for the train.py smoke runs
    return frozen_hparams("ppo_tf_tiny", **{"jit_compile": True, **overrides})


_env = tf_env


def _assert_same_run(joint: dict, single: dict) -> None:
    assert_same_run(joint, single, rtol=2e-4, atol=2e-6)


@pytest.fixture(scope="module")
def population():
    base = _hparams()
    members = [_hparams(**values) for values in MEMBERS]
    joint = CompiledPPOSeeds(base, _env(base), [3, 4, 5], members)
    metrics = [joint.run_iteration() for _ in range(ITERATIONS)]
    return members, joint, metrics


def test_every_population_key_is_a_tensor_of_the_program(population):
    _, joint, _ = population
    assert sorted(joint.population.keys) == sorted(MEMBERS[0])
    assert joint.iteration.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(joint.population.get("gamma").numpy(), [0.99, 0.95, 0.999])


def test_each_member_clips_at_its_own_clip_range(population):
    """The loss is traced once for all members and reads each member's clip_range: only member
    2's (0.002) is small enough to clip in a tiny run."""
    _, _, metrics = population
    clip_fraction = np.array([[m["clip_fraction"] for m in it] for it in metrics])  # [iter, S]
    assert np.all(clip_fraction[:, :2] == 0) and np.all(clip_fraction[:, 2] > 0), clip_fraction


# Slow (~6 s of CPU a member): the default tier checks that every member's hparams reach it
# (test_members_differ_where_their_hparams_do) and that a seed of the same joint program equals
# its single run (tests/compiled/test_ppo_seeds_iteration.py).
@pytest.mark.slow
@pytest.mark.parametrize("member", [0, 1, 2])
def test_a_member_equals_the_single_run_of_its_hparams(population, member):
    members, joint, joint_metrics = population
    hp = members[member]
    single = CompiledPPO(hp, _env(hp), seed=[3, 4, 5][member])
    single_metrics = [single.run_iteration() for _ in range(ITERATIONS)]
    _assert_same_run(joint.variables(member), single.variables())
    for joint_m, single_m in zip(joint_metrics, single_metrics, strict=True):
        for key in single_m:
            np.testing.assert_allclose(
                joint_m[member][key], single_m[key], rtol=2e-4, atol=2e-6, err_msg=key
            )


def test_members_differ_where_their_hparams_do(population):
    """The same seed with other hparams trains to other weights (the values are not ignored)."""
    base = _hparams()
    same_seed = [_hparams(**MEMBERS[0]), _hparams(**MEMBERS[1])]
    joint = CompiledPPOSeeds(base, _env(base), [7, 7], same_seed)
    joint.run_iteration()
    first, second = joint.variables(0), joint.variables(1)
    kernels = [key for key in first if "_trainable_variables" in key]  # the weights
    assert kernels and all(not np.allclose(first[k], second[k]) for k in kernels)


def test_structural_keys_and_schedules_are_refused():
    base = _hparams()
    with pytest.raises(UserError, match="differ only in .* these differ too: n_epochs"):
        check_members(base, [_hparams(n_epochs=3), _hparams(n_epochs=2)])
    with pytest.raises(UserError, match="constant number in every member"):
        varying_keys([_hparams(lr=1e-3), _hparams(lr="linear(1e-3, 0.0, 10)")])
    with pytest.raises(UserError, match="varies max_grad_norm needs it > 0"):
        varying_keys([_hparams(max_grad_norm=0.0), _hparams(max_grad_norm=1.0)])
    # The base's schedule may differ from the members' numbers: the members replace it.
    assert check_members(base, [_hparams(lr=1e-3), _hparams(lr=2e-3)]) == ["lr"]


def test_the_program_does_not_grow_with_its_members(population):
    """One copy of the network, loss, gradient, optimizer, generators and envs serves every
    member (batched ops over the stack): a member adds only its own counters' few ops (env and
    gradient steps), where a copy of its graph per member was ~290 ops."""
    members, three, _ = population

    def ops(joint: CompiledPPOSeeds) -> int:
        graph = joint.iteration.get_concrete_function().graph.as_graph_def()
        return len(graph.node) + sum(len(f.node_def) for f in graph.library.function)

    two = CompiledPPOSeeds(_hparams(), _env(members[0]), [3, 4], members[:2])
    assert 0 < ops(three) - ops(two) <= 10
