"""Seeds split over CPU cores (`rl.compiled.shard_threads`): shards run concurrently from threads
and every seed ends exactly where it ends when trained alone (sharding changes wall time only).
"""

from __future__ import annotations

import numpy as np
import pytest
from compiled_fixtures import frozen_hparams, tf_env

import rl  # noqa: F401  (fills the registries)
from rl.compiled import CompiledDQN, CompiledPPO
from rl.compiled.programs import OneSeed, build_group
from rl.compiled.shard_threads import ShardedSeeds, shard_count, split_evenly, usable_cores

_hparams = frozen_hparams
_env = tf_env


def test_split_evenly_and_shard_count():
    assert split_evenly([1, 2, 3, 4, 5, 6, 7, 8], 2) == [[1, 2, 3, 4], [5, 6, 7, 8]]
    assert split_evenly([1, 2, 3, 4, 5], 3) == [[1, 2], [3, 4], [5]]
    assert split_evenly([7], 1) == [[7]]
    assert shard_count(_hparams("ppo_tf_tiny", seed_shards=3), num_seeds=8) == 3
    assert shard_count(_hparams("ppo_tf_tiny", seed_shards=3), num_seeds=2) == 2  # <= seeds
    assert shard_count(_hparams("ppo_tf_tiny", seed_shards=0), num_seeds=8) == min(
        8, usable_cores()
    )  # CPU-only here: one per core
    assert shard_count(_hparams("ppo_tf_tiny", seed_shards=0), num_seeds=1) == 1
    assert shard_count(_hparams("ppo_tf_tiny"), num_seeds=8) == 1  # the default: one program


def test_build_group_shards_a_multi_seed_program_by_the_hparam():
    hp = _hparams("ppo_tf_tiny", seed_shards=2)
    group = build_group(hp, _env(hp), [3, 4, 5])
    try:
        assert isinstance(group, ShardedSeeds)
        assert [len(shard.members) for shard in group.shards] == [2, 1]
        assert [member.seed for member in group.members] == [3, 4, 5]
    finally:
        group.close()
    single = build_group(_hparams("ppo_tf_tiny", seed_shards=1), _env(hp), [3, 4, 5])
    assert not isinstance(single, ShardedSeeds) and len(single.members) == 3


@pytest.mark.parametrize(
    ("name", "run_class"),
    [
        ("ppo_tf_tiny", CompiledPPO),
        # Sharding does not look inside the program: a second algorithm is the slow tier's.
        pytest.param("dqn_tf_tiny", CompiledDQN, marks=pytest.mark.slow),
    ],
)
def test_concurrent_shards_equal_each_seed_trained_alone(name, run_class):
    # Graph mode without XLA: what is under test is running programs from threads, and six XLA
    # compilations would cost more than the rest of this file.
    hp = _hparams(name, jit_compile=False)
    env = _env(hp)
    iterations = 3 if run_class is CompiledPPO else 4  # DQN: 4 x 64 steps, learning from 100
    sharded = ShardedSeeds([OneSeed(run_class(hp, env, seed)) for seed in (0, 1)])
    try:
        metrics = [sharded.run_iteration() for _ in range(iterations)]
        evaluations = sharded.evaluate([20, 21], num_envs=2)
    finally:
        sharded.close()
    assert sharded.members[0].agent.learner.gradient_steps.numpy() > 0  # something was learned
    for s, seed in enumerate((0, 1)):
        alone = run_class(hp, env, seed)
        alone_metrics = [alone.run_iteration() for _ in range(iterations)]
        assert [m[s] for m in metrics] == alone_metrics  # floats equal, bit for bit
        expected, actual = alone.variables(), sharded.members[s].variables()
        assert expected.keys() == actual.keys()
        for key in expected:
            np.testing.assert_array_equal(actual[key], expected[key], err_msg=f"{seed} {key}")
        returns, lengths = alone.evaluate(20 + s, num_envs=2)
        np.testing.assert_array_equal(evaluations[s][0], returns)
        np.testing.assert_array_equal(evaluations[s][1], lengths)
