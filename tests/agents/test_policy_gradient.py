"""Policy-gradient losses, distributions, shuffling and the on-policy agents, checked by hand."""

import math

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.agents.gradient_functions import (
    entropy_bonus,
    policy_gradient_loss,
    ppo_clip_loss,
    value_loss,
)
from rl.agents.on_policy import minibatch_indices, normalize
from rl.envs import make_vector_env
from rl.envs.spec import EnvSpec
from rl.errors import UserError
from rl.models import ActorCritic
from rl.rollout.driver import Driver

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)  # 0.918939


# ------------------------------------------------------------------------------ losses
def test_policy_gradient_loss_and_its_gradient_by_hand():
    log_prob = tf.Variable([-1.0, -2.0])
    advantage = tf.constant([2.0, 3.0])
    with tf.GradientTape() as tape:
        loss = policy_gradient_loss(log_prob, advantage)
    # -mean(-1*2, -2*3) = -mean(-2, -6) = 4; d loss / d log_prob = -A / B = [-1, -1.5].
    assert float(loss) == pytest.approx(4.0)
    np.testing.assert_allclose(tape.gradient(loss, log_prob), [-1.0, -1.5])
    # Masking out the second sample: -(-2) / 1 = 2.
    assert float(policy_gradient_loss(log_prob, advantage, tf.constant([1.0, 0.0]))) == 2.0


def test_ppo_clip_loss_clip_fraction_and_kl_by_hand():
    ratio = np.array([1.5, 0.5, 0.5, 1.1], np.float32)
    log_prob = tf.Variable(np.log(ratio))
    old_log_prob = tf.zeros(4)
    advantage = tf.constant([1.0, 1.0, -1.0, 2.0])
    with tf.GradientTape() as tape:
        loss, clip_fraction, approx_kl = ppo_clip_loss(log_prob, old_log_prob, advantage, 0.2)
    # min(r A, clip(r, 0.8, 1.2) A) per sample:
    #   r=1.5, A=1:  min(1.5, 1.2) = 1.2      (clipped)
    #   r=0.5, A=1:  min(0.5, 0.8) = 0.5      (|r-1| > 0.2)
    #   r=0.5, A=-1: min(-0.5, -0.8) = -0.8   (clipped)
    #   r=1.1, A=2:  min(2.2, 2.2) = 2.2      (inside the range)
    # loss = -(1.2 + 0.5 - 0.8 + 2.2) / 4 = -0.775; clip fraction 3/4.
    assert float(loss) == pytest.approx(-0.775, rel=1e-5)
    assert float(clip_fraction) == pytest.approx(0.75)
    # approx KL = mean((r-1) - ln r): 0.5-0.405465=0.094535, -0.5+0.693147=0.193147 (twice),
    # 0.1-0.095310=0.004690 -> 0.485519 / 4 = 0.121380.
    assert float(approx_kl) == pytest.approx(0.121380, rel=1e-4)
    # Gradient flows only where the unclipped term is the minimum: d/dlogp (r A)/4 = r A / 4,
    # negated: sample 2: -0.5*1/4 = -0.125, sample 4: -1.1*2/4 = -0.55; samples 1, 3: 0.
    np.testing.assert_allclose(tape.gradient(loss, log_prob), [0, -0.125, 0, -0.55], rtol=1e-5)


def test_value_loss_plain_and_clipped_by_hand():
    value, target = tf.constant([1.0, 3.0]), tf.constant([2.0, 2.0])
    # 0.5 * mean((1-2)^2, (3-2)^2) = 0.5
    assert float(value_loss(value, target)) == pytest.approx(0.5)
    # Clipped (PPO2): old [0, 3], eps 0.5. Sample 1: V moved +1 -> clipped V = 0.5,
    # (0.5-2)^2 = 2.25 > 1 -> 2.25. Sample 2: did not move -> 1. 0.5 * (2.25 + 1) / 2 = 0.8125.
    clipped = value_loss(value, target, tf.constant([0.0, 3.0]), 0.5)
    assert float(clipped) == pytest.approx(0.8125)
    assert float(value_loss(value, target, mask=tf.constant([0.0, 1.0]))) == pytest.approx(0.5)


def test_entropy_bonus_is_the_masked_mean():
    entropy = tf.constant([1.0, 3.0])
    assert float(entropy_bonus(entropy)) == 2.0
    assert float(entropy_bonus(entropy, tf.constant([1.0, 0.0]))) == 1.0


def test_losses_are_registered():
    for name in ("policy_gradient_loss", "ppo_clip_loss", "value_loss", "entropy_bonus"):
        assert name in registry.gradient_functions


# ----------------------------------------------------------------------- distributions
def box_spec(dims: int) -> EnvSpec:
    return EnvSpec(
        env_id="box",
        num_envs=1,
        obs_shape=(3,),
        obs_dtype=np.dtype(np.float32),
        action_type="box",
        num_actions=0,
        action_shape=(dims,),
        action_dtype=np.dtype(np.float32),
        action_low=-np.ones(dims, np.float32),
        action_high=np.ones(dims, np.float32),
        max_episode_steps=None,
    )


def test_categorical_log_prob_and_entropy_by_hand():
    _, spec = make_vector_env("CartPole-v1", 1, seed=0)
    model = ActorCritic(spec, "mlp", [8], "tanh")
    # logits [0, ln 3] -> probs [1/4, 3/4]: log pi(1) = ln 0.75 = -0.287682, log pi(0) = ln 0.25;
    # entropy = 0.25 ln 4 + 0.75 ln(4/3) = 0.346574 + 0.215762 = 0.562335.
    distribution = model.distribution(tf.constant([[0.0, math.log(3.0)]] * 2))
    log_prob = distribution.log_prob(tf.constant([1, 0], tf.int64)).numpy()
    np.testing.assert_allclose(log_prob, [-0.287682, math.log(0.25)], rtol=1e-5)
    assert distribution.entropy().numpy()[0] == pytest.approx(0.562335, rel=1e-5)


def test_diagonal_gaussian_log_prob_and_entropy_by_hand():
    model = ActorCritic(box_spec(2), "mlp", [8], "tanh")
    model(tf.zeros([1, 3]))
    model.log_std.assign([math.log(2.0), 0.0])  # std [2, 1]
    distribution = model.distribution(tf.constant([[1.0, 0.0]]))
    # action [2, 1]: dim 1: -0.5 ((2-1)/2)^2 - ln 2 - 0.5 ln 2pi = -0.125 - 0.693147 - 0.918939
    # = -1.737086; dim 2: -0.5 - 0 - 0.918939 = -1.418939; summed: -3.156025.
    log_prob = distribution.log_prob(tf.constant([[2.0, 1.0]])).numpy()[0]
    assert log_prob == pytest.approx(-0.125 - math.log(2) - 0.5 - 2 * HALF_LOG_2PI, rel=1e-6)
    assert log_prob == pytest.approx(-3.156025, rel=1e-6)
    # entropy per dim 0.5 ln(2 pi e sigma^2) = 1.418939 + ln sigma: 2.112086 + 1.418939.
    assert distribution.entropy().numpy()[0] == pytest.approx(3.531025, rel=1e-6)


def test_shared_torso_runs_once_and_separate_torsos_have_their_own_variables():
    _, spec = make_vector_env("CartPole-v1", 1, seed=0)
    shared = ActorCritic(spec, "mlp", [8], "tanh")
    logits, value = shared(tf.zeros([5, 4]))
    assert logits.shape == (5, 2) and value.shape == (5,)
    # torso 4*8+8, policy 8*2+2, value 8+1
    assert sum(int(np.prod(v.shape)) for v in shared.trainable_variables) == 40 + 18 + 9
    separate = ActorCritic(spec, "mlp", [8], "tanh", separate_torsos=True)
    separate(tf.zeros([1, 4]))
    assert sum(int(np.prod(v.shape)) for v in separate.trainable_variables) == 40 + 18 + 40 + 9
    np.testing.assert_allclose(separate.value(tf.ones([2, 4])), separate(tf.ones([2, 4]))[1])


# ------------------------------------------------------------------- minibatch shuffling
def test_shuffling_covers_every_sample_once_per_epoch():
    generator = tf.random.Generator.from_seed(0)
    first = minibatch_indices(generator, 12, 3).numpy()
    second = minibatch_indices(generator, 12, 3).numpy()
    assert first.shape == (3, 4)
    np.testing.assert_array_equal(np.sort(first.ravel()), np.arange(12))
    np.testing.assert_array_equal(np.sort(second.ravel()), np.arange(12))
    assert not np.array_equal(first, second)  # a fresh permutation each epoch


def test_normalize_uses_masked_samples_only():
    # Masked samples [1, 3]: mean 2, std 1 -> [-1, 1]; the masked-out 100 maps to 98.
    out = normalize(tf.constant([1.0, 3.0, 100.0]), tf.constant([1.0, 1.0, 0.0])).numpy()
    np.testing.assert_allclose(out, [-1.0, 1.0, 98.0], rtol=1e-6)


# ------------------------------------------------------------------------------ agents
def make_agent(hparams_set: str, overrides: str = "", env: str | None = None):
    hp = registry.get_hparams(hparams_set)()
    hp.jit_compile = False  # seconds of XLA compile per test; training tests run XLA
    hp.override(overrides)
    hp.freeze()
    env, spec = make_vector_env(
        env or hp.env, hp.num_envs, seed=0, max_episode_steps=hp.max_episode_steps
    )
    agent = registry.get_agent(hp.agent)(spec, hp, seed=0)
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    return agent, driver


@pytest.mark.parametrize("hparams_set", ["ppo_tiny", "a2c_tiny", "reinforce_tiny"])
def test_update_runs_all_epochs_and_minibatches_in_one_call(hparams_set):
    agent, driver = make_agent(hparams_set)
    hp = agent.hparams
    assert agent.update() == {}  # nothing collected yet
    driver.collect(agent.steps_per_iteration)
    metrics = agent.update()
    rollout = hp.train_every // hp.num_envs * hp.num_envs
    assert int(agent.learner.gradient_steps.numpy()) == hp.n_epochs * rollout // hp.batch_size
    assert {"train/loss", "train/policy_loss", "train/entropy"} <= set(metrics)
    assert len(agent.rollout) == 0  # emptied for the next rollout
    assert agent.train_on_batch.experimental_get_tracing_count() == 1
    driver.collect(agent.steps_per_iteration)
    agent.update()
    assert agent.train_on_batch.experimental_get_tracing_count() == 1  # no retracing


def test_ppo_lr_and_clip_range_anneal_inside_the_compiled_update():
    # ppo_tiny: 2 envs x 32 steps = 64 samples, batch 32, 2 epochs -> 4 gradient steps/update;
    # lr linear(1e-3, 0, 32): after steps 0..3 the optimizer holds lr(3) = 1e-3 * 29/32.
    agent, driver = make_agent("ppo_tiny")
    driver.collect(agent.steps_per_iteration)
    agent.update()
    assert agent.learner.optimizer.learning_rate.numpy() == pytest.approx(1e-3 * 29 / 32, rel=1e-5)
    # clip linear(0.2, 0.1, 32) at gradient step 4: 0.2 - 0.1 * 4/32 = 0.1875.
    assert agent.metrics()["train/clip_range"] == pytest.approx(0.1875, rel=1e-5)


def test_ppo_improves_the_surrogate_on_its_own_rollout():
    agent, driver = make_agent("ppo_tiny", "lr=1e-2,clip_range=0.3,n_epochs=8")
    driver.collect(agent.steps_per_iteration)
    data = {k: v.copy() for k, v in agent.rollout.data().items()}
    first = agent.train_on_batch(data)
    # After 8 epochs the policy moved: the clipped objective is active on some samples.
    assert float(first["clip_fraction"]) > 0.0
    assert float(first["approx_kl"]) > 0.0


def test_reinforce_without_baseline_drops_unfinished_episode_tails():
    agent, _ = make_agent("reinforce_tiny")
    ended = np.zeros([4, 2], bool)
    ended[1, 0] = True  # env 0 ends at t=1; env 1 never ends in this batch
    batch = {
        "reward": tf.ones([4, 2]),
        "terminated": tf.constant(ended),
        "truncated": tf.zeros([4, 2], tf.bool),
    }
    # Steps 0, 1 of env 0 have complete returns; everything else is unfinished.
    np.testing.assert_array_equal(
        agent.sample_mask(batch).numpy(), [[1, 0], [1, 0], [0, 0], [0, 0]]
    )
    assert agent.learner_variables() == agent.model.policy_variables
    with_baseline, _ = make_agent("reinforce_tiny", "baseline=True")
    assert with_baseline.sample_mask(batch).numpy().all()


def test_truncated_step_bootstraps_from_the_final_observation_value():
    # PPO's advantage pipeline on a hand-made rollout of 1 step x 2 envs (ppo_tiny has 2):
    # env 0 is truncated, env 1 terminates.
    agent, _ = make_agent("ppo_tiny", "train_every=2,batch_size=1,gae_lambda=1.0")
    final_obs = np.zeros([1, 2, 4], np.float32)
    final_obs[0, 0] = [0.1, 0.2, 0.3, 0.4]
    batch = {
        "obs": tf.zeros([1, 2, 4]),
        "action": tf.zeros([1, 2], tf.int64),
        "reward": tf.ones([1, 2]),
        "terminated": tf.constant([[False, True]]),
        "truncated": tf.constant([[True, False]]),
        "log_prob": tf.zeros([1, 2]),
        "value": tf.zeros([1, 2]),
        "final_obs": tf.constant(final_obs),
        "last_next_obs": tf.ones([2, 4]),
    }
    gamma = agent.hparams.gamma
    returns = agent.training_samples(batch)["return"]  # [T * N]
    v_final = float(agent.model.value(final_obs[0, :1])[0])
    # Env 0 truncated: 1 + gamma V(final_obs); env 1 terminated: 1 (no bootstrap at all).
    np.testing.assert_allclose(returns.numpy(), [1 + gamma * v_final, 1.0], rtol=1e-5)


def test_box_actions_sample_a_gaussian_and_greedy_is_the_clipped_mean():
    agent, driver = make_agent("a2c_tiny")
    obs = tf.zeros([2, 3])
    explore = agent.act(obs, explore=True).numpy()
    assert explore.shape == (2, 1) and not np.array_equal(explore[0], explore[1])
    greedy = agent.greedy_actions(np.zeros([2, 3], np.float32))
    mean = agent.model(obs)[0].numpy()
    np.testing.assert_allclose(greedy, np.clip(mean, -2.0, 2.0), rtol=1e-6)
    driver.collect(agent.steps_per_iteration)
    assert "train/loss" in agent.update()


def test_gaussian_log_std_is_trained_and_checkpointed(tmp_path):
    # Regression: a bare tf.Variable on a Keras 3 model is not in `trainable_variables`, so the
    # optimizer never moved the policy's spread.
    agent, driver = make_agent("a2c_tiny", "log_std_init=-0.5")
    log_std = agent.model.log_std
    assert any(v is log_std for v in agent.learner_variables())
    assert any(v is log_std for v in agent.model.policy_variables)
    np.testing.assert_allclose(log_std.numpy(), [-0.5])
    driver.collect(agent.steps_per_iteration)
    agent.update()
    assert not np.allclose(log_std.numpy(), [-0.5])  # the update moved it
    trained = log_std.numpy().copy()
    checkpoint = tf.train.Checkpoint(model=agent.model)
    path = checkpoint.write(str(tmp_path / "ckpt"))
    log_std.assign([3.0])
    checkpoint.read(path).assert_consumed()
    np.testing.assert_allclose(log_std.numpy(), trained)


def test_uneven_minibatches_skip_fewer_than_one_sample_per_minibatch():
    # 10 samples in 3 minibatches of 3: one random sample per epoch is left out.
    indices = minibatch_indices(tf.random.Generator.from_seed(1), 10, 3).numpy()
    assert indices.shape == (3, 3) and len(set(indices.ravel())) == 9
    # ppo_tiny with 3 envs (as in train.py's test mode): 21 x 3 = 63 samples, batch 32 -> 2
    # minibatches of 31.
    agent, _ = make_agent("ppo_tiny", "num_envs=3")
    assert agent.num_minibatches == 2


def test_partial_rollout_is_checkpointed_and_restored():
    agent, driver = make_agent("ppo_tiny")
    driver.collect(5)
    agent.end_all_episodes()  # the trainer's cut: the latest step becomes a truncation
    state = agent.numpy_state()
    assert int(state["rollout/t"]) == 5
    assert (state["rollout/truncated"][4] | state["rollout/terminated"][4]).all()
    restored, _ = make_agent("ppo_tiny")
    restored.load_numpy_state(state)
    assert len(restored.rollout) == 5
    np.testing.assert_array_equal(restored.rollout.data()["obs"], agent.rollout.data()["obs"])


def test_normalized_observations_and_rewards_as_vecnormalize():
    # ppo_tiny with SB3's VecNormalize in the agent: the training envs' observations update the
    # statistics as the agent acts (greedy evaluation reads them frozen), rewards enter the
    # rollout scaled, and the scaler's state is in the checkpoint.
    agent, driver = make_agent("ppo_tiny", "normalize_obs=True,normalize_reward=True")
    normalizer = agent.model.obs_normalizer
    driver.collect(agent.steps_per_iteration)
    batch = agent.rollout.data()
    # Every observation acted on (32 steps x 2 envs) entered the statistics once.
    assert float(normalizer.count.numpy()) == pytest.approx(1e-4 + 64, rel=1e-6)
    mean = batch["obs"].reshape(-1, 4).mean(axis=0)  # the prior's weight 1e-4 is negligible
    np.testing.assert_allclose(normalizer.mean.numpy(), mean, atol=1e-4)
    agent.greedy_actions(batch["obs"][0])
    assert float(normalizer.count.numpy()) == pytest.approx(1e-4 + 64, rel=1e-6)
    # CartPole pays 1 per step: step t's scaled rewards are what a fresh scaler gives after
    # the same t + 1 steps and episode ends.
    scaler = type(agent.reward_scaler)(2, agent.hparams.gamma)
    done = np.logical_or(batch["terminated"], batch["truncated"])
    for t in range(len(done)):
        np.testing.assert_allclose(batch["reward"][t], scaler(np.ones(2), done[t]), rtol=1e-6)
    assert np.ptp(batch["reward"]) > 0.01  # scaled, not the env's constant 1
    assert {"reward_scaler/var", "reward_scaler/returns"} <= set(agent.numpy_state())
    assert np.isfinite(agent.update()["train/loss"])


def test_observations_stored_normalized_with_the_statistics_of_their_own_step():
    # normalize_obs_at=collection: each observation enters the rollout as VecNormalize hands it
    # to SB3, normalized with the statistics that include it and none after it; the update then
    # takes them as they are (not normalized again with the later statistics).
    agent, driver = make_agent("ppo_tiny", "normalize_obs=True,normalize_obs_at=collection")
    raw, stored = [], []
    for _ in range(agent.steps_per_iteration):
        before = len(agent.rollout)
        raw.append(np.asarray(driver.obs, np.float64).copy())
        driver.collect(1)
        stored.append(agent.rollout.data()["obs"][before])
    # The statistics step by step, from the raw observations alone (SB3's RunningMeanStd).
    mean, var, count = np.zeros(4), np.ones(4), 1e-4
    for obs, kept in zip(raw, stored, strict=True):
        delta, total = obs.mean(axis=0) - mean, count + len(obs)
        m2 = var * count + obs.var(axis=0) * len(obs) + delta**2 * count * len(obs) / total
        mean, var, count = mean + delta * len(obs) / total, m2 / total, total
        expected = np.clip((obs - mean) / np.sqrt(var + 1e-8), -10, 10)
        np.testing.assert_allclose(kept, expected, rtol=1e-4, atol=1e-5)
    # The update's passes skip the normalizer: the last step's stored observations give the
    # outputs the acting pass gave on the raw ones (same weights, same statistics).
    last = tf.constant(stored[-1], tf.float32)
    np.testing.assert_allclose(
        agent.learning_model.value(last), agent.model.value(raw[-1]), rtol=1e-5, atol=1e-6
    )
    assert not np.allclose(agent.model.value(last), agent.model.value(raw[-1]))
    assert np.isfinite(agent.update()["train/loss"])


@pytest.mark.parametrize(
    "override, message",
    [
        ("normalize_obs_at=collection", "needs normalize_obs=True"),
        ("normalize_obs=True,normalize_obs_at=later", "use update or collection"),
    ],
)
def test_normalize_obs_at_mistakes_are_named(override, message):
    with pytest.raises(UserError, match=message):
        make_agent("ppo_tiny", override)
