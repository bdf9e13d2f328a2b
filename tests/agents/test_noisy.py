"""NoisyNet: the factorised noisy layer by hand, and a noisy DQN whose exploration really comes
from the noise (acting, learning, checkpointing)."""

import numpy as np
import pytest
import tensorflow as tf

from rl import registry
from rl.envs import make_vector_env
from rl.models import QNetwork
from rl.models.noisy import NoisyDense, scale_noise
from rl.rollout.driver import Driver


def test_scale_noise_is_signed_square_root():
    np.testing.assert_allclose(scale_noise(tf.constant([4.0, -9.0, 0.0])).numpy(), [2, -3, 0])


def test_noisy_dense_forward_by_hand():
    layer = NoisyDense(2)
    layer.build((None, 2))
    layer.kernel_mu.assign([[1.0, 0.0], [0.0, 1.0]])
    layer.kernel_sigma.assign([[0.5, 0.5], [0.5, 0.5]])
    layer.bias_mu.assign([0.1, 0.2])
    layer.bias_sigma.assign([1.0, 1.0])
    layer.noise_in.assign([4.0, -1.0])  # f -> [2, -1]
    layer.noise_out.assign([1.0, -9.0])  # f -> [1, -3]
    # eps_w = outer([2, -1], [1, -3]) = [[2, -6], [-1, 3]]; sigma_w * eps_w = [[1, -3],
    # [-0.5, 1.5]]; W = mu_w + that = [[2, -3], [-0.5, 2.5]]; x = [1, 2]: x W = [1, 2].
    # b = mu_b + sigma_b * f(eps_out) = [0.1 + 1, 0.2 - 3] = [1.1, -2.8]; y = [2.1, -0.8].
    x = tf.constant([[1.0, 2.0]])
    np.testing.assert_allclose(layer(x).numpy(), [[2.1, -0.8]], rtol=1e-6)
    # Without noise: the mean weights, x mu_w + mu_b = [1.1, 2.2].
    np.testing.assert_allclose(layer(x, noisy=False).numpy(), [[1.1, 2.2]], rtol=1e-6)


def test_noisy_dense_initialisation_follows_the_paper():
    layer = NoisyDense(32, sigma0=0.5)
    layer.build((None, 16))  # p = 16: mu ~ U[-1/4, 1/4], sigma = 0.5 / 4
    for mu in (layer.kernel_mu, layer.bias_mu):
        assert np.abs(mu.numpy()).max() <= 0.25
        assert mu.numpy().std() > 0.05  # spread over the interval, not constant
    np.testing.assert_allclose(layer.kernel_sigma.numpy(), 0.125)
    np.testing.assert_allclose(layer.bias_sigma.numpy(), 0.125)
    assert {v.name for v in layer.trainable_variables} == {
        "kernel_mu",
        "kernel_sigma",
        "bias_mu",
        "bias_sigma",
    }


def test_resample_draws_from_the_given_generator():
    layer = NoisyDense(3)
    layer.build((None, 2))
    layer.resample_noise(tf.random.Generator.from_seed(7))
    first = layer.noise_in.numpy().copy(), layer.noise_out.numpy().copy()
    layer.resample_noise(tf.random.Generator.from_seed(7))
    np.testing.assert_array_equal(layer.noise_in.numpy(), first[0])  # same seed, same noise
    np.testing.assert_array_equal(layer.noise_out.numpy(), first[1])
    expected = tf.random.Generator.from_seed(7).normal([5]).numpy()
    np.testing.assert_array_equal(np.concatenate(first), expected)


def test_noisy_option_replaces_the_head_and_the_dueling_streams():
    plain = QNetwork(2, "mlp", [8], "relu", dueling=False, noisy=True)
    dueling = QNetwork(2, "mlp", [8], "relu", dueling=True, noisy=True)
    deterministic = QNetwork(2, "mlp", [8], "relu", dueling=True)
    for net in (plain, dueling, deterministic):
        net(tf.zeros([1, 4]))
    assert [type(x) for x in plain.noisy_layers()] == [NoisyDense]
    assert [x.name for x in dueling.noisy_layers()] == ["value", "advantage"]
    assert deterministic.noisy_layers() == []


# ------------------------------------------------------------------------------ the agent
def make_agent(overrides: str = "", seed: int = 0):
    hp = registry.get_hparams("noisy_dqn_tiny")()
    hp.jit_compile = False  # seconds of XLA compile per test; training tests run XLA
    hp.override(overrides)
    hp.freeze()
    env, spec = make_vector_env("CartPole-v1", 1, seed=0)
    return registry.get_agent(hp.agent)(spec, hp, seed=seed), env, spec


OBS = tf.constant(np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32))


@pytest.fixture(scope="module")
def agent():
    agent, _, _ = make_agent()
    agent.env_steps.assign(agent.hparams.learning_starts)  # past the random warm-up
    return agent


def test_the_set_turns_epsilon_off(agent):
    assert agent.hparams.noisy
    assert agent.metrics()["train/epsilon"] == 0.0


def test_noise_changes_exploring_actions_but_not_greedy_ones(agent):
    explore = tf.function(lambda obs: agent.act(obs, explore=True))
    samples = [explore(OBS).numpy() for _ in range(4)]
    greedy = [agent.greedy_actions(OBS.numpy()) for _ in range(2)]
    # epsilon is 0: only the resampled noise can change the actions between calls.
    assert any((a != samples[0]).any() for a in samples[1:])
    np.testing.assert_array_equal(greedy[0], greedy[1])
    # Greedy actions use the mean weights: argmax of the network without noise.
    without_noise = tf.argmax(agent.q_network(OBS, noisy=False), -1).numpy()
    np.testing.assert_array_equal(greedy[0], without_noise)
    assert any((a != greedy[0]).any() for a in samples)


def test_with_sigma_zero_exploring_actions_are_the_greedy_ones():
    agent, _, _ = make_agent()
    agent.env_steps.assign(agent.hparams.learning_starts)
    for layer in agent.q_network.noisy_layers():
        layer.kernel_sigma.assign(tf.zeros_like(layer.kernel_sigma))
        layer.bias_sigma.assign(tf.zeros_like(layer.bias_sigma))
    greedy = agent.greedy_actions(OBS.numpy())
    for _ in range(3):
        np.testing.assert_array_equal(agent.act(OBS, explore=True).numpy(), greedy)


def test_same_seed_same_noise_and_actions():
    # As the trainer does: the global seed fixes the initial weights, the agent's seed its
    # generator, which alone draws the noise.
    tf.keras.utils.set_random_seed(3)
    first, _, _ = make_agent(seed=3)
    tf.keras.utils.set_random_seed(3)
    second, _, _ = make_agent(seed=3)
    for agent in (first, second):
        agent.env_steps.assign(agent.hparams.learning_starts)
    for _ in range(3):
        np.testing.assert_array_equal(
            first.act(OBS, explore=True).numpy(), second.act(OBS, explore=True).numpy()
        )


def test_sigma_learns_noise_is_resampled_per_step_and_both_are_checkpointed(tmp_path):
    agent, env, spec = make_agent("learning_starts=0,gradient_steps=4,lr=0.01")
    sigmas = [v for v in agent.q_network.trainable_variables if "sigma" in v.name]
    assert len(sigmas) == 4  # kernel and bias sigma of the value and advantage streams
    # The loss has a gradient in every sigma once noise is drawn.
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(60)
    batch = agent.replay.sample(16, num_batches=1)
    sample = {k: v[0] for k, v in batch.items() if k != "indices"}
    agent.q_network.resample_noise(agent.generator)
    agent.target_network.resample_noise(agent.generator)
    with tf.GradientTape() as tape:
        loss, _ = agent.loss(sample)
    for grad in tape.gradient(loss, sigmas):
        assert float(tf.reduce_sum(tf.abs(grad))) > 0.0
    # An update moves the sigmas and leaves the online and target nets with their own noise.
    before = [s.numpy().copy() for s in sigmas]
    agent.update()
    assert all((s.numpy() != b).any() for s, b in zip(sigmas, before, strict=True))
    online = agent.q_network.head.value.noise_in.numpy()
    target = agent.target_network.head.value.noise_in.numpy()
    assert (online != target).all()
    # Sigmas (and the noise) are in the checkpoint: a fresh agent with other initial weights
    # restores them exactly. (The online net's trainable variables are stored under the
    # optimizer's path, as for every agent; restoring maps them back by object identity.)
    path = tf.train.Checkpoint(agent=agent).save(str(tmp_path / "ckpt"))
    tf.keras.utils.set_random_seed(123)
    fresh, _, _ = make_agent("learning_starts=0,gradient_steps=4,lr=0.01", seed=1)
    fresh_sigmas = [v for v in fresh.q_network.trainable_variables if "sigma" in v.name]
    assert not any(
        np.array_equal(f.numpy(), s.numpy()) for f, s in zip(fresh_sigmas, sigmas, strict=True)
    )
    tf.train.Checkpoint(agent=fresh).restore(path).assert_existing_objects_matched()
    for restored, trained in zip(fresh_sigmas, sigmas, strict=True):
        np.testing.assert_array_equal(restored.numpy(), trained.numpy())
    for mine, theirs in zip(fresh.q_network.variables, agent.q_network.variables, strict=True):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())  # noise included
    reader = tf.train.load_checkpoint(path)
    assert any(
        "target_network/head/value/kernel_sigma" in k for k in reader.get_variable_to_shape_map()
    )
