"""TD3 / DDPG / SAC agents: action bounds, exploration statistics, updates, OU-state checkpoints."""

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.envs import make_vector_env
from rl.rollout.driver import Driver

AGENTS = ("td3_tiny", "ddpg_tiny", "sac_tiny")


def make_agent(
    hparams_set: str,
    overrides: str = "",
    num_envs: int = 1,
    max_episode_steps: int | None = None,
    env_id: str = "Pendulum-v1",
):
    hp = registry.get_hparams(hparams_set)()
    hp.jit_compile = False  # an XLA compile per test costs seconds; training tests run XLA
    hp.override(overrides)
    hp.num_envs = num_envs
    hp.max_episode_steps = max_episode_steps
    hp.freeze()
    env, spec = make_vector_env(env_id, num_envs, seed=0, max_episode_steps=max_episode_steps)
    # The agent's seed drives its sampling; its Keras initializers draw from the global seed,
    # which the engines set (rl.utils.seeding) and these tests must too: else they vary per run.
    tf.keras.utils.set_random_seed(0)
    agent = registry.get_agent(hp.agent)(spec, hp, seed=0)
    return agent, env, spec


def random_obs(spec, n: int, seed: int = 0) -> tf.Tensor:
    rng = np.random.default_rng(seed)
    return tf.constant(rng.uniform(-1, 1, size=(n, *spec.obs_shape)), tf.float32)


@pytest.mark.parametrize("hparams_set", AGENTS)
@pytest.mark.parametrize("env_id", ["Pendulum-v1", "MountainCarContinuous-v0"])
def test_actions_stay_within_the_bounds(hparams_set, env_id):
    agent, _, spec = make_agent(hparams_set, "learning_starts=0", env_id=env_id)
    # Large observations push the pre-tanh outputs far out: the bounds must still hold.
    obs = random_obs(spec, 500) * 100.0
    for explore in (False, True):
        action = agent.act(obs, explore=explore).numpy()
        assert action.shape == (500, *spec.action_shape)
        assert (action >= spec.action_low).all() and (action <= spec.action_high).all()
    greedy = agent.greedy_actions(obs.numpy())
    assert (greedy >= spec.action_low).all() and (greedy <= spec.action_high).all()


@pytest.mark.parametrize("hparams_set", AGENTS)
def test_uniform_random_actions_before_learning_starts(hparams_set):
    agent, _, spec = make_agent(hparams_set, "learning_starts=1000")
    obs = tf.zeros([20000, *spec.obs_shape])
    action = agent.act(obs, explore=True).numpy()
    # Uniform on [-2, 2]: mean 0, std 4 / sqrt(12) = 1.1547.
    assert action.mean() == pytest.approx(0.0, abs=0.03)
    assert action.std() == pytest.approx(4 / np.sqrt(12), abs=0.02)


def test_td3_gaussian_exploration_noise_statistics():
    # sigma 0.05 of Pendulum's half-range 2: explore - greedy has std 0.1 (no clipping: the
    # untrained actor's actions lie well inside [-2, 2] for these observations).
    agent, _, spec = make_agent("td3_tiny", "learning_starts=0,action_noise_std=0.05")
    obs = tf.tile(random_obs(spec, 1), [20000, 1])
    greedy = agent.act(obs, explore=False).numpy()
    assert np.abs(greedy).max() < 1.5
    noise = agent.act(obs, explore=True).numpy() - greedy
    assert noise.mean() == pytest.approx(0.0, abs=0.003)
    assert noise.std() == pytest.approx(0.1, abs=0.002)


def test_sac_exploration_samples_around_the_squashed_mean():
    agent, _, spec = make_agent("sac_tiny", "learning_starts=0")
    obs = tf.tile(random_obs(spec, 1), [20000, 1])
    mean, log_std = agent.actor(obs[:1])
    greedy = agent.act(obs[:1], explore=False).numpy()
    np.testing.assert_allclose(greedy, 2.0 * np.tanh(mean.numpy()), rtol=1e-5)
    actions = agent.act(obs, explore=True).numpy()
    # Inverting the squashing recovers u ~ N(mean, std).
    u = np.arctanh(np.clip(actions / 2.0, -1 + 1e-6, 1 - 1e-6))
    assert u.mean() == pytest.approx(float(mean[0, 0]), abs=0.05)
    assert u.std() == pytest.approx(float(np.exp(log_std[0, 0])), rel=0.05)


def test_agents_refuse_discrete_actions():
    for name in ("td3_tiny", "sac_tiny"):
        hp = registry.get_hparams(name)()
        hp.freeze()
        _, spec = make_vector_env("CartPole-v1", 1, seed=0)
        with pytest.raises(rl.errors.UserError, match="Box"):
            registry.get_agent(hp.agent)(spec, hp, seed=0)


def collected(hparams_set, overrides, steps=120, **kwargs):
    agent, env, spec = make_agent(hparams_set, overrides, **kwargs)
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(steps)
    return agent, driver


def weights(model):
    return [w.copy() for w in model.get_weights()]


def changed(before, after):
    return any(not np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_td3_delays_the_actor_and_moves_targets_by_tau():
    agent, _ = collected("td3_tiny", "learning_starts=0,gradient_steps=1,policy_delay=2,tau=0.5")
    actor, critics = weights(agent.actor), weights(agent.critics)
    actor_target, critics_target = weights(agent.actor_target), weights(agent.critics_target)
    metrics = agent.update()  # gradient step 1: 1 % 2 != 0 -> critics only
    assert {"train/loss", "train/actor_loss", "train/q_mean"} <= set(metrics)
    assert metrics["train/actor_loss"] == 0.0  # no policy step yet, so no policy loss to log
    assert changed(critics, weights(agent.critics))
    assert not changed(actor, weights(agent.actor))
    assert not changed(actor_target, weights(agent.actor_target))
    policy_step = agent.update()  # gradient step 2: actor step, then Polyak with tau 0.5
    assert changed(actor, weights(agent.actor))
    for online, old_target, target in (
        (agent.actor, actor_target, agent.actor_target),
        (agent.critics, critics_target, agent.critics_target),
    ):
        pairs = zip(online.get_weights(), old_target, target.get_weights(), strict=True)
        for now, before, got in pairs:
            np.testing.assert_allclose(got, 0.5 * now + 0.5 * before, rtol=1e-5, atol=1e-7)
    assert int(agent.learner.gradient_steps.numpy()) == 2
    # Step 3 is critics only again: it logs step 2's policy loss rather than computing one.
    actor = weights(agent.actor)
    assert agent.update()["train/actor_loss"] == policy_step["train/actor_loss"] != 0.0
    assert not changed(actor, weights(agent.actor))


@pytest.mark.parametrize("hparams_set", AGENTS)
def test_update_lowers_the_critic_loss_on_a_fixed_batch(hparams_set):
    agent, _ = collected(hparams_set, "learning_starts=0,lr=0.01,memory=uniform")
    batch = agent.replay.sample(16, num_batches=1)
    batch.pop("indices")
    first = float(agent.train_on_batch(batch)["loss"])
    repeated = {k: tf.repeat(v, 32, axis=0) for k, v in batch.items()}
    last = float(agent.train_on_batch(repeated)["loss"])
    assert last < first
    assert int(agent.learner.gradient_steps.numpy()) == 33


@pytest.mark.parametrize("hparams_set", ["td3_tiny", "sac_tiny"])
def test_prioritized_replay_gets_td_priorities(hparams_set):
    agent, _ = collected(hparams_set, "learning_starts=0,memory=prioritized,gradient_steps=4")
    sampler = agent.replay.sampler
    before = sampler.tree.get(np.arange(len(agent.replay))).copy()
    np.testing.assert_allclose(before, 1.0)  # new rows: max priority 1
    agent.update()
    after = sampler.tree.get(np.arange(len(agent.replay)))
    assert (after != 1.0).sum() > 0


@pytest.mark.parametrize(("target_entropy", "direction"), [(-20.0, -1.0), (20.0, 1.0)])
def test_sac_moves_alpha_towards_the_target_entropy(target_entropy, direction):
    # The policy's entropy (a few nats at most on a 1-D action) is far above -20 and far below
    # 20: alpha must fall for the first target and rise for the second.
    agent, _ = collected(
        "sac_tiny", f"learning_starts=0,gradient_steps=4,target_entropy={target_entropy}"
    )
    assert float(agent.log_alpha.numpy()) == pytest.approx(0.0)
    metrics = agent.update()
    assert {"train/alpha", "train/alpha_loss", "train/entropy", "train/actor_loss"} <= set(metrics)
    assert -20.0 < metrics["train/entropy"] < 20.0
    assert np.sign(float(agent.log_alpha.numpy())) == direction


def test_sac_default_target_entropy_is_minus_the_action_dimensions():
    agent, *_ = make_agent("sac_tiny")
    assert agent.default_target_entropy == -1.0  # Pendulum: one action dimension


def test_sac_fixed_alpha_stays():
    agent, _ = collected("sac_tiny", "learning_starts=0,auto_alpha=False,alpha_init=0.2")
    agent.update()
    assert float(np.exp(agent.log_alpha.numpy())) == pytest.approx(0.2)


def test_ou_state_is_reset_per_episode_and_checkpointed(tmp_path):
    overrides = "learning_starts=0,action_function=ornstein_uhlenbeck,action_noise_std=0.3"
    agent, driver = collected("ddpg_tiny", overrides, steps=3, num_envs=2, max_episode_steps=5)
    state = agent.noise_state.numpy().copy()
    assert state.shape == (2, 1) and (state != 0).all()
    checkpoint = tf.train.Checkpoint(agent=agent)
    path = checkpoint.write(str(tmp_path / "ckpt"))
    restored, *_ = make_agent("ddpg_tiny", overrides, num_envs=2, max_episode_steps=5)
    assert (restored.noise_state.numpy() == 0).all()
    tf.train.Checkpoint(agent=restored).read(path).assert_consumed()
    np.testing.assert_array_equal(restored.noise_state.numpy(), state)
    # Steps 4 and 5: both episodes hit the 5-step limit on step 5, so observe zeroes the state.
    driver.collect(2)
    np.testing.assert_array_equal(agent.noise_state.numpy(), 0.0)
    driver.collect(1)  # the next episode's first step starts a fresh process
    assert (agent.noise_state.numpy() != 0).all()
    agent.end_all_episodes()  # a checkpoint cut ends every episode
    np.testing.assert_array_equal(agent.noise_state.numpy(), 0.0)


def test_ou_exploration_is_temporally_correlated():
    agent, _, spec = make_agent(
        "ddpg_tiny", "learning_starts=0,action_function=ornstein_uhlenbeck", num_envs=1
    )
    obs = random_obs(spec, 1)
    greedy = agent.act(obs, explore=False).numpy()
    noise = np.array([agent.act(obs, explore=True).numpy() - greedy for _ in range(400)]).ravel()
    # OU with theta 0.15: lag-1 autocorrelation 1 - theta = 0.85 (white noise: 0).
    corr = np.corrcoef(noise[:-1], noise[1:])[0, 1]
    assert corr > 0.6


@pytest.mark.parametrize("hparams_set", ["td3_tiny", "sac_tiny"])
def test_torch_init_draws_every_dense_layer_as_pytorch_and_syncs_the_targets(hparams_set):
    agent, env, _ = make_agent(hparams_set, "torch_init=True")
    env.close()
    dense = [v for net in (agent.actor, agent.critics) for v in net.trainable_variables]
    assert len(dense) >= 8
    for kernel, bias in zip(dense[::2], dense[1::2], strict=True):  # Dense: kernel, then bias
        bound = 1.0 / kernel.shape[0] ** 0.5  # U(-1/sqrt(fan_in), +1/sqrt(fan_in))
        for values in (kernel.numpy(), bias.numpy()):
            assert np.abs(values).max() <= bound
            assert values.size < 16 or np.abs(values).max() > 0.5 * bound  # spread over U
        assert np.abs(bias.numpy()).min() > 0  # Keras' own init leaves biases at zero
    for online, target in [(agent.critics, agent.critics_target)] + (
        [(agent.actor, agent.actor_target)] if hparams_set == "td3_tiny" else []
    ):
        for a, b in zip(online.variables, target.variables, strict=True):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
