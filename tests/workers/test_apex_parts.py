"""The pieces of Ape-X, in-process: per-actor epsilons, actor hparams, the weights an actor
copies, actor-side priorities (checked by hand), the actor's outbox, the
learner's worker statistics and progress.csv columns, and the one-line worker errors."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import tensorflow as tf

from rl import registry
from rl.agents.build import build_actor, build_agent
from rl.envs import make_vector_env
from rl.errors import WorkerError, worker_error_line
from rl.rollout.driver import Driver
from rl.workers.exploration import actor_epsilon, actor_hparams, apex_epsilon
from rl.workers.progress import WorkerProgressCSV, WorkerStats
from rl.workers.weights import PolicyWeights, policy_variables


def _dqn(hparams_set: str = "dqn_tiny", **changes):
    hp = registry.get_hparams(hparams_set)()
    for key, value in changes.items():
        setattr(hp, key, value)
    hp.freeze()
    env, spec = make_vector_env(hp.env, hp.num_envs, 0, max_episode_steps=hp.max_episode_steps)
    return hp, env, spec, registry.get_agent(hp.agent)(spec, hp, 0)


def test_apex_epsilons_follow_the_paper_formula():
    # eps_i = 0.4^(1 + 7 i / (N - 1)): N = 3 gives 0.4, 0.4^4.5, 0.4^8.
    assert [apex_epsilon(i, 3) for i in range(3)] == pytest.approx([0.4, 0.4**4.5, 0.4**8])
    assert [apex_epsilon(i, 2) for i in range(2)] == pytest.approx([0.4, 0.00065536])
    assert apex_epsilon(0, 1) == 0.4
    assert apex_epsilon(1, 2, base=0.5, alpha=1.0) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        apex_epsilon(2, 2)


def test_actor_hparams_set_the_actor_epsilon_only():
    hp = registry.get_hparams("dqn_tiny")().freeze()
    actor = actor_hparams(hp, 1, 3)
    assert actor.frozen
    assert float(actor.epsilon(tf.constant(10**6, tf.int64))) == pytest.approx(0.4**4.5)
    assert float(hp.epsilon(tf.constant(10**6, tf.int64))) != pytest.approx(0.4**4.5)
    diff = {line.split(":")[0] for line in hp.diff(actor)}
    assert diff == {"epsilon"}

    agent_mode = registry.get_hparams("dqn_tiny")()
    agent_mode.workers.exploration = "agent"
    agent_mode.freeze()
    assert actor_epsilon(agent_mode, 1, 3) is None
    assert actor_hparams(agent_mode, 1, 3).epsilon == agent_mode.epsilon

    td3 = registry.get_hparams("td3_tiny")().freeze()  # no epsilon: its own action noise
    assert actor_epsilon(td3, 0, 2) is None
    assert not td3.diff(actor_hparams(td3, 0, 2))


def test_policy_variables_are_the_networks_not_counters():
    _, env, _, agent = _dqn()
    env.close()
    variables = policy_variables(agent)
    expected = agent.q_network.variables + agent.target_network.variables
    assert [v.path for v in variables] == [v.path for v in expected]
    assert not any(v is agent.env_steps or v is agent.learner.gradient_steps for v in variables)


def test_policy_weights_travel_as_one_flat_array():
    hp, env, spec, learner = _dqn()
    env.close()
    actor = build_actor(hp, spec, 1)  # other seed: other initial weights
    flat = PolicyWeights(learner).read()
    expected = [v.numpy() for v in policy_variables(learner)]
    assert flat.shape == (sum(a.size for a in expected),) and flat.dtype == np.float32
    PolicyWeights(actor).load(flat)
    for got, want in zip(policy_variables(actor), expected, strict=True):
        np.testing.assert_array_equal(got.numpy(), want)


def test_initial_priorities_are_the_double_q_td_errors():
    hp, env, spec, _ = _dqn()
    env.close()
    agent = build_actor(hp, spec, 0)  # the actor computes them
    rng = np.random.default_rng(0)
    batch = {
        "obs": rng.normal(size=(5, 4)).astype(np.float32),
        "action": rng.integers(0, 2, 5),
        "reward": rng.normal(size=5).astype(np.float32),
        "next_obs": rng.normal(size=(5, 4)).astype(np.float32),
        "discount": np.array([0.99, 0.0, 0.99, 0.9801, 0.99], np.float32),
    }
    # Make the target network differ from the online one, so double Q matters.
    for variable in agent.target_network.variables:
        variable.assign(variable * 0.5 + 0.1)
    priorities = agent.initial_priorities(batch)
    # By hand: |r + discount * Q_target(s', argmax_a Q(s', a)) - Q(s, a)| (double Q).
    q = agent.q_network(batch["obs"]).numpy()
    q_next_online = agent.q_network(batch["next_obs"]).numpy()
    q_next_target = agent.target_network(batch["next_obs"]).numpy()
    best = q_next_online.argmax(axis=1)
    target = batch["reward"] + batch["discount"] * q_next_target[np.arange(5), best]
    expected = np.abs(target - q[np.arange(5), batch["action"]])
    np.testing.assert_allclose(priorities, expected, rtol=1e-5, atol=1e-6)
    assert hp.double_q


def test_agents_without_td_errors_leave_priorities_to_the_replay():
    hp = registry.get_hparams("td3_tiny")().freeze()
    env, spec = make_vector_env(hp.env, 1, 0)
    env.close()
    agent = registry.get_agent("td3")(spec, hp, 0)
    batch = {"reward": np.zeros(3, np.float32)}
    assert agent.initial_priorities(batch) is None


def test_an_actor_outbox_gets_the_n_step_transitions_instead_of_the_replay():
    from rl.workers.outbox import Outbox

    hp, env, spec, learner = _dqn()  # n_step = 3, one env copy
    actor = build_actor(hp, spec, 0)
    assert actor.replay is None  # no table on the actor's side
    actor.replay = outbox = Outbox()
    driver = Driver(env, spec, actor)
    driver.reset(0)
    driver.collect(40)
    env.close()
    rows = len(outbox)
    # Every step but the ones still waiting in the n-step window became a transition.
    assert rows == 40 - int(actor.n_step.pending().sum())
    transitions = outbox.drain()
    assert set(transitions) == {"obs", "action", "reward", "next_obs", "discount"}
    assert len(transitions["reward"]) == rows and len(outbox) == 0 and outbox.drain() is None
    # The learner adds them with the actor's priorities (Ape-X engine).
    learner.replay.add_batch(transitions, priorities=np.full(rows, 2.0))
    assert len(learner.replay) == rows
    stored = learner.replay.get_priorities(np.arange(len(learner.replay)))
    np.testing.assert_allclose(stored, (2.0 + hp.per_epsilon.value(0)) ** hp.per_alpha.value(0))


@pytest.mark.parametrize(
    "hparams_set", ["dqn_tiny", "qrdqn_tiny", "td3_tiny", "sac_tiny", "impala_tiny"]
)
def test_a_ray_actor_builds_the_acting_role_alone(hparams_set):
    from rl.workers.outbox import Outbox

    hp = registry.get_hparams(hparams_set)().freeze()
    env, spec = make_vector_env(hp.env, hp.num_envs, 0)
    obs, _ = env.reset(seed=0)
    learner, actor = build_agent(hp, spec, 0), build_actor(hp, spec, 1)
    optimizers = [v for v in vars(actor).values() if isinstance(v, tf.keras.optimizers.Optimizer)]
    assert actor.learner is None and not optimizers
    assert getattr(actor, "replay", None) is None
    shapes = [v.shape for v in policy_variables(actor)]  # paths carry Keras' name counters
    assert shapes == [v.shape for v in policy_variables(learner)]
    with pytest.raises(TypeError, match="does not learn"):
        actor.update()
    # With the learner's weights it acts as the learner would.
    PolicyWeights(actor).load(PolicyWeights(learner).read())
    np.testing.assert_array_equal(actor.greedy_actions(obs), learner.greedy_actions(obs))
    if hasattr(actor, "initial_priorities"):  # an Ape-X actor collects and prioritizes
        actor.replay = outbox = Outbox()
        driver = Driver(env, spec, actor)
        driver.reset(0)
        driver.collect(8)
        transitions = outbox.drain()
        priorities = actor.initial_priorities(transitions)
        assert priorities is None or priorities.shape == transitions["reward"].shape
    env.close()


def _block(worker: int, steps: int, returns: list[float], epsilon: float | None) -> dict:
    return {
        "worker": worker,
        "env_steps": steps,
        "collect_seconds": 0.5,
        "episode_returns": returns,
        "episode_lengths": [10] * len(returns),
        "epsilon": epsilon,
    }


def test_worker_stats_per_worker_rates_episodes_and_epsilons():
    stats = WorkerStats(2)
    stats.add(_block(0, 100, [1.0, 3.0], 0.4))
    stats.add(_block(0, 100, [], 0.4))
    stats.add(_block(1, 50, [5.0], None))
    out = stats.scalars()
    assert out["workers/0/acting_steps_per_second"] == pytest.approx(200.0)  # 200 / (2 * 0.5)
    assert out["workers/1/acting_steps_per_second"] == pytest.approx(100.0)
    assert out["workers/0/steps_per_second"] / out["workers/1/steps_per_second"] == (
        pytest.approx(4.0)
    )
    assert out["workers/steps_per_second"] == pytest.approx(
        out["workers/0/steps_per_second"] + out["workers/1/steps_per_second"]
    )
    assert out["workers/0/episode_return"] == 2.0 and out["workers/1/episode_return"] == 5.0
    assert out["workers/0/episodes"] == 2 and out["workers/1/episodes"] == 1
    assert out["workers/0/epsilon"] == 0.4 and "workers/1/epsilon" not in out
    after = stats.scalars()  # a new interval: rates restart, totals and epsilon stay
    assert after["workers/0/steps_per_second"] == 0.0 and after["workers/0/episodes"] == 2
    assert after["workers/0/epsilon"] == 0.4 and "workers/0/episode_return" not in after


def test_progress_csv_has_worker_columns_and_resume_trims_them(tmp_path):
    path = str(tmp_path / "progress.csv")
    sink = WorkerProgressCSV(path, num_workers=2)
    values = {
        "eval/return_mean": 10.0,
        "workers/steps_per_second": 1234.5,
        "workers/0/steps_per_second": 600.0,
        "workers/1/epsilon": 0.00065536,
        "workers/replay_size": 900.0,
    }
    sink.write(values, 300)
    sink.write({"train/loss": 1.0}, 400)  # not an evaluation: no row
    sink.write({**values, "eval/return_mean": 20.0}, 600)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["env_steps"] for r in rows] == ["300", "600"]
    assert rows[0]["steps_per_second"] == "1234.5" and rows[0]["worker_0_steps_per_second"] == "600"
    assert rows[0]["worker_1_epsilon"] == "0.00065536" and rows[0]["worker_0_epsilon"] == ""
    assert rows[1]["eval_return_mean"] == "20.0000" and rows[0]["replay_size"] == "900"
    # Resumed at 300 with 3 workers: the later row goes, the new worker's columns appear.
    resumed = WorkerProgressCSV(path, num_workers=3, resume_at_step=300)
    resumed.write(values, 500)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["env_steps"] for r in rows] == ["300", "500"]
    assert rows[1]["worker_2_epsilon"] == "" and "worker_2_steps_per_second" in rows[0]


def test_worker_error_lines_also_through_tf_wrapping():
    assert worker_error_line(WorkerError("worker 1 failed: ValueError: x")) == (
        "worker 1 failed: ValueError: x"
    )
    wrapped = RuntimeError(
        "Graph execution error:\n\nDetected at node while/PyFunc\n"
        "rl.errors.WorkerError: env worker 0 (env copies 0-1) failed: KeyError: 'a'\n"
        "Traceback (most recent call last):\n  ..."
    )
    assert worker_error_line(wrapped) == "env worker 0 (env copies 0-1) failed: KeyError: 'a'"
    assert worker_error_line(ValueError("something else")) is None
