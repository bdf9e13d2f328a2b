"""The compiled DQN iteration (`CompiledDQN`) and its in-graph replay (`TFReplay`).

- the ring buffer overwrites the oldest rows and samples only stored rows;
- one iteration appends exactly its T * N transitions (time-major, discount 0 at termination,
  next_obs = the true last observation), learns nothing before `learning_starts`, then runs
  `gradient_steps` gradient steps per iteration and changes the Q-network;
- save + restore + continue equals running straight through, bit for bit (replay included);
- what the compiled replay cannot do is a UserError.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401  (fills the registries)
from rl import registry
from rl.compiled import CompiledDQN
from rl.compiled.replay import TFReplay
from rl.envs.tf import make_tf_env
from rl.errors import UserError


def _dqn(seed: int = 0, **overrides) -> CompiledDQN:
    hp = registry.get_hparams("dqn_tf_tiny")()
    for key, value in overrides.items():
        setattr(hp, key, value)
    hp.freeze()
    return CompiledDQN(hp, make_tf_env(hp.env, max_episode_steps=hp.max_episode_steps), seed)


def test_replay_ring_overwrites_oldest_and_samples_stored_rows():
    replay = TFReplay(3, {"reward": ((), tf.float32), "obs": ((2,), tf.float32)})
    add = lambda *r: replay.add(  # noqa: E731
        {"reward": tf.constant(r, tf.float32), "obs": tf.constant([[x, -x] for x in r])}
    )
    add(1.0, 2.0)
    assert int(replay.size()) == 2
    generator = tf.random.Generator.from_seed(0)
    drawn = replay.sample(generator, num_batches=4, batch_size=50)["reward"].numpy()
    assert drawn.shape == (4, 50) and set(np.unique(drawn)) == {1.0, 2.0}  # never row 3
    add(3.0, 4.0, 5.0)  # 5 rows into 3: rows 0, 1, 2 now hold 4, 5, 3
    assert int(replay.size()) == 3 and int(replay.added) == 5
    np.testing.assert_array_equal(replay.fields["reward"].numpy(), [4.0, 5.0, 3.0])
    np.testing.assert_array_equal(replay.fields["obs"].numpy()[:, 1], [-4.0, -5.0, -3.0])
    drawn = replay.sample(generator, num_batches=1, batch_size=600)
    assert set(np.unique(drawn["reward"])) == {3.0, 4.0, 5.0}
    np.testing.assert_array_equal(drawn["obs"][..., 1], -drawn["reward"])  # rows stay whole


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    """dqn_tf_tiny seed 3 for 5 iterations, with what the tests below look at on the way: the
    replay after iteration 1, a checkpoint after iteration 2, every iteration's metrics."""
    dqn = _dqn(seed=3)
    record = {"weights": [v.numpy() for v in dqn.agent.q_network.trainable_variables]}
    record["metrics"] = [dqn.run_iteration()]
    record["replay"] = {k: v.numpy()[:64] for k, v in dqn.replay.fields.items()}
    record["counters"] = [
        int(dqn.agent.learner.gradient_steps.numpy()),
        int(dqn.replay.added.numpy()),
    ]
    record["metrics"].append(dqn.run_iteration())
    record["checkpoint"] = dqn.checkpoint.write(str(tmp_path_factory.mktemp("dqn") / "ckpt"))
    record["metrics"] += [dqn.run_iteration() for _ in range(3)]
    record["variables"] = dqn.variables()
    return dqn, record


def test_iteration_fills_replay_then_learns(straight):
    dqn, record = straight
    hp, n = dqn.hp, dqn.spec.num_envs
    assert dqn.steps_per_iteration == 64 and dqn.num_steps == 16
    first = record["metrics"][0]  # 64 env steps < learning_starts (100): only acting
    assert first["learned"] == 0.0 and record["counters"] == [0, 64]
    replay = record["replay"]
    np.testing.assert_array_equal(replay["reward"], np.ones(64))  # CartPole: +1 per step
    discount = replay["discount"]
    assert set(np.unique(discount)) <= {0.0, np.float32(hp.gamma)}
    # A terminal transition (discount 0) leaves the cart/pole out of bounds in next_obs.
    next_obs = replay["next_obs"]
    out = (np.abs(next_obs[:, 0]) > 2.4) | (np.abs(next_obs[:, 2]) > 12 * 2 * np.pi / 360)
    np.testing.assert_array_equal(out, discount == 0.0)
    # Time-major rows: row t * N + e is env e at step t, whose obs is row (t-1) * N + e's
    # next_obs unless that transition ended its episode (then obs is a fresh reset).
    going_on = discount[:-n] != 0.0
    np.testing.assert_array_equal(replay["obs"][n:][going_on], next_obs[:-n][going_on])
    for out in record["metrics"][1:]:
        assert out["learned"] == 1.0 and np.isfinite(out["loss"]) and out["grad_norm"] > 0
    assert int(dqn.agent.learner.gradient_steps.numpy()) == 4 * hp.gradient_steps
    assert int(dqn.agent.env_steps.numpy()) == 5 * 64
    assert dqn.iteration.experimental_get_tracing_count() == 1
    after = [v.numpy() for v in dqn.agent.q_network.trainable_variables]
    assert any(not np.array_equal(a, b) for a, b in zip(record["weights"], after, strict=True))
    returns, lengths = dqn.evaluate(seed=5, num_envs=3)
    np.testing.assert_array_equal(returns, lengths.astype(np.float64))


def test_save_restore_is_bit_identical_to_uninterrupted(straight):
    _, record = straight
    expected = record["variables"]
    resumed = _dqn(seed=3)  # fresh weights, replay and envs, then the checkpoint of step 128
    resumed.checkpoint.read(record["checkpoint"]).assert_consumed()
    for _ in range(3):
        resumed.run_iteration()
    actual = resumed.variables()
    assert actual.keys() == expected.keys()
    assert any(k.startswith("replay/") for k in expected)
    assert any("target_network" in k for k in expected)
    for key in expected:
        np.testing.assert_array_equal(actual[key], expected[key], err_msg=key)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"memory": "prioritized"}, "uniform one-step replay"),
        ({"n_step": 3}, "uniform one-step replay"),
        ({"buffer_size": 32}, "larger than buffer_size"),
    ],
)
def test_what_the_compiled_replay_cannot_do_is_a_user_error(overrides, message):
    with pytest.raises(UserError, match=message):
        _dqn(**overrides)
