"""Per-update diagnostics at DEBUG: the loss on a batch before and after the optimizer step on
that SAME batch, the gradient norm, their logging, and zero cost when DEBUG is off."""

import logging

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.agents.diagnostics import LOGGER
from rl.envs import make_vector_env
from rl.rollout.driver import Driver


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture
def debug_records():
    """The `rl` logger at DEBUG while the test builds agents; the diagnostics' log lines."""
    logger, records = logging.getLogger("rl"), Records()
    level = logger.level
    logger.setLevel(logging.DEBUG)
    LOGGER.addHandler(records)
    yield records
    LOGGER.removeHandler(records)
    logger.setLevel(level)


def make_agent(hparams_set, overrides="", env_id="CartPole-v1", num_envs=1):
    hp = registry.get_hparams(hparams_set)()
    hp.override(overrides)
    hp.num_envs = num_envs
    hp.jit_compile = False
    hp.freeze()
    tf.keras.utils.set_random_seed(0)  # the same initial weights for the same overrides
    env, spec = make_vector_env(env_id, num_envs, seed=0, max_episode_steps=hp.max_episode_steps)
    return registry.get_agent(hp.agent)(spec, hp, seed=0), env, spec


def hand_batch():
    """One [K=1, B=4] CartPole batch written out by hand."""
    obs = [
        [0.1, -0.2, 0.03, 0.4],
        [0.0, 0.5, -0.05, -0.3],
        [-0.2, 0.1, 0.1, 0.2],
        [0.3, 0.0, 0.0, 0.1],
    ]
    next_obs = [
        [0.1, 0.0, 0.05, 0.2],
        [0.02, 0.3, -0.06, 0.1],
        [-0.1, 0.2, 0.2, 0.5],
        [0.3, 0.1, 0.0, 0.0],
    ]
    return {
        "obs": tf.constant([obs], tf.float32),
        "action": tf.constant([[0, 1, 1, 0]], tf.int64),
        "reward": tf.constant([[1.0, 1.0, 0.0, 1.0]]),
        "next_obs": tf.constant([next_obs], tf.float32),
        "discount": tf.constant([[0.99, 0.99, 0.0, 0.99]]),
        "weights": tf.ones([1, 4]),
    }


def test_dqn_loss_after_the_step_is_lower_on_the_same_batch(debug_records):
    agent, _, _ = make_agent("dqn", "hidden_sizes=[8],lr=0.01,batch_size=4")
    batch = hand_batch()
    sample = {key: value[0] for key, value in batch.items()}
    variables = agent.q_network.trainable_variables
    with tf.GradientTape() as tape:
        expected_before, _ = agent.loss(sample)
    expected_norm = tf.linalg.global_norm(tape.gradient(expected_before, variables))
    agent.train_on_batch(batch)  # one compiled gradient step
    expected_after, _ = agent.loss(sample)

    metrics = agent.learner.diagnostics.pop(int(agent.learner.gradient_steps.numpy()))
    assert metrics["debug/loss_before"] == pytest.approx(float(expected_before), rel=1e-5)
    assert metrics["debug/loss_after"] == pytest.approx(float(expected_after), rel=1e-5)
    assert metrics["debug/grad_norm"] == pytest.approx(float(expected_norm), rel=1e-5)
    assert metrics["debug/loss_after"] < metrics["debug/loss_before"]
    assert metrics["debug/loss_change"] == pytest.approx(
        metrics["debug/loss_after"] - metrics["debug/loss_before"]
    )
    assert metrics["debug/improved_fraction"] == 1.0
    assert len(debug_records.messages) == 1 and "on the same batch" in debug_records.messages[0]
    assert agent.learner.diagnostics.pop(0) == {}  # the sums were reset


def test_dqn_update_logs_diagnostics_that_match_its_own_metrics(debug_records):
    agent, env, spec = make_agent(
        "dqn", "hidden_sizes=[8],batch_size=16,learning_starts=32,gradient_steps=4,train_every=4"
    )
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(32)
    metrics = agent.update()
    # train/loss and train/grad_norm are means over the K = 4 steps, like the diagnostics.
    assert metrics["debug/loss_before"] == pytest.approx(metrics["train/loss"], rel=1e-5)
    assert metrics["debug/grad_norm"] == pytest.approx(metrics["train/grad_norm"], rel=1e-5)
    assert np.isfinite(metrics["debug/loss_after"])
    assert "of 4 steps" in debug_records.messages[-1]


def test_ppo_gets_the_same_diagnostics_from_the_base_class(debug_records):
    agent, env, spec = make_agent("ppo_tiny", num_envs=2)
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(agent.steps_per_iteration)
    metrics = agent.update()
    steps = agent.hparams.n_epochs * agent.num_minibatches
    assert metrics["debug/loss_before"] == pytest.approx(metrics["train/loss"], rel=1e-5)
    assert metrics["debug/grad_norm"] == pytest.approx(metrics["train/grad_norm"], rel=1e-5)
    assert 0.0 <= metrics["debug/improved_fraction"] <= 1.0
    assert f"of {steps} steps" in debug_records.messages[-1]


def test_after_loss_reuses_the_random_numbers_and_leaves_the_rng_stream_alone(debug_records):
    # A loss that draws noise from the agent's generator: re-evaluated after the step with the
    # SAME noise, it must be lower; and the generator must end where a non-DEBUG agent's does.
    def step(agent):
        variables = agent.q_network.trainable_variables[:1]

        def loss_fn():
            noise = agent.generator.normal(tf.shape(variables[0]))
            return tf.reduce_mean(tf.square(variables[0] - noise)), {}

        tf.function(lambda: agent.learner.gradient_step(loss_fn, variables))()
        return agent.generator.state.numpy(), variables[0].numpy()

    debug_agent, _, _ = make_agent("dqn", "hidden_sizes=[8],lr=0.01")
    debug_state, debug_weights = step(debug_agent)
    metrics = debug_agent.learner.diagnostics.pop(1)
    assert metrics["debug/loss_after"] < metrics["debug/loss_before"]

    logging.getLogger("rl").setLevel(logging.INFO)
    plain_agent, _, _ = make_agent("dqn", "hidden_sizes=[8],lr=0.01")
    assert plain_agent.learner.diagnostics is None
    plain_state, plain_weights = step(plain_agent)
    np.testing.assert_array_equal(debug_state, plain_state)
    np.testing.assert_array_equal(debug_weights, plain_weights)


def _matmuls(function, batch) -> int:
    """MatMul ops in a tf.function's graph, loop bodies (library functions) included."""
    graph_def = function.get_concrete_function(batch).graph.as_graph_def()
    nodes = list(graph_def.node)
    for library_function in graph_def.library.function:
        nodes.extend(library_function.node_def)
    return sum(node.op == "MatMul" for node in nodes)


def test_no_extra_forward_pass_is_traced_without_debug(debug_records):
    debug_agent, _, _ = make_agent("dqn", "hidden_sizes=[8],batch_size=4")
    logging.getLogger("rl").setLevel(logging.INFO)
    plain_agent, _, _ = make_agent("dqn", "hidden_sizes=[8],batch_size=4")
    assert plain_agent.learner.diagnostics is None
    plain, debug = (
        _matmuls(plain_agent.train_on_batch, hand_batch()),
        _matmuls(debug_agent.train_on_batch, hand_batch()),
    )
    # Double DQN's loss runs 3 forward passes of a 2-layer network (6 MatMuls); DEBUG re-runs
    # the loss once after the update, and nothing else.
    assert debug - plain == 6
