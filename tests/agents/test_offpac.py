"""Off-PAC: truncated importance weights, the critic's off-policy target, the actor loss and the
agent's whole loss checked by hand; replay, update and checkpoint mechanics; re-evaluation of
replayed behaviour data."""

import math

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.agents.gradient_functions.offpac import (
    offpac_actor_loss,
    offpac_critic_targets,
    truncated_importance_weights,
)
from rl.envs import make_vector_env
from rl.rollout import Rollout, reevaluate
from rl.rollout.driver import Driver

LN = math.log


# --------------------------------------------------------------------------- the losses
def test_truncated_importance_weights_by_hand():
    log_prob = tf.constant([LN(0.5), LN(0.2), LN(0.9)])
    behaviour = tf.constant([LN(0.25), LN(0.4), LN(0.9)])
    # pi/b = [2, 0.5, 1]; truncated at 1: [1, 0.5, 1].
    np.testing.assert_allclose(truncated_importance_weights(log_prob, behaviour, None), [2, 0.5, 1],
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(truncated_importance_weights(log_prob, behaviour, 1.0), [1, 0.5, 1],
                               rtol=1e-6)  # fmt: skip


def critic_inputs():
    """T=3 steps of 2 envs, gamma 0.5.

    env 0: no episode end, V = [1, 2, 3], V(s_3) = 4, rewards 1, pi/b = [2, 0.5, 1];
    env 1: terminated at t=0, V = 1 everywhere, V(s_3) = 1, rewards [1, 2, 1], pi = b.
    """
    rewards = tf.constant([[1.0, 1.0], [1.0, 2.0], [1.0, 1.0]])
    values = tf.constant([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    discounts = tf.constant([[0.5, 0.0], [0.5, 0.5], [0.5, 0.5]])
    bootstrap = tf.constant([4.0, 1.0])
    log_rhos = tf.constant([[LN(2.0), 0.0], [LN(0.5), 0.0], [0.0, 0.0]])
    return rewards, values, discounts, bootstrap, log_rhos


def test_critic_target_and_td_advantage_by_hand():
    targets, advantages = offpac_critic_targets(*critic_inputs(), lambda_=1.0, rho_bar=1.0,
                                                c_bar=1.0)  # fmt: skip
    # env 0: rho_bar = c = [1, 0.5, 1]; delta = r + 0.5 V' - V = [1+1-1, 1+1.5-2, 1+2-3]
    #   = [1, 0.5, 0]; rho_bar delta = [1, 0.25, 0]. v - V backwards: t2: 0; t1: 0.25 + 0.5 *
    #   0.5 * 0 = 0.25; t0: 1 + 0.5 * 1 * 0.25 = 1.125 -> v = [2.125, 2.25, 3].
    #   A = r + 0.5 v' - V (lambda 1): [1 + 1.125 - 1, 1 + 1.5 - 2, 1 + 2 - 3] = [1.125, 0.5, 0].
    # env 1: delta = [1 + 0 - 1, 2 + 0.5 - 1, 1 + 0.5 - 1] = [0, 1.5, 0.5] (the termination at
    #   t=0 cuts the bootstrap and the trace). v - V: t2 0.5; t1 1.5 + 0.5 * 0.5 = 1.75;
    #   t0 0 -> v = [1, 2.75, 1.5]; A = [1 - 1, 2 + 0.75 - 1, 1 + 0.5 - 1] = [0, 1.75, 0.5].
    np.testing.assert_allclose(targets, [[2.125, 1.0], [2.25, 2.75], [3.0, 1.5]], rtol=1e-6)
    np.testing.assert_allclose(advantages, [[1.125, 0.0], [0.5, 1.75], [0.0, 0.5]], rtol=1e-6)


def test_lambda_zero_gives_the_papers_td_error_actor_and_one_step_critic():
    targets, advantages = offpac_critic_targets(*critic_inputs(), lambda_=0.0)
    # No traces: v = V + rho_bar delta = env 0 [2, 2.25, 3], env 1 [1, 2.5, 1.5];
    # A = delta: env 0 [1, 0.5, 0], env 1 [0, 1.5, 0.5].
    np.testing.assert_allclose(targets, [[2.0, 1.0], [2.25, 2.5], [3.0, 1.5]], rtol=1e-6)
    np.testing.assert_allclose(advantages, [[1.0, 0.0], [0.5, 1.5], [0.0, 0.5]], rtol=1e-6)


def test_untruncated_weights_give_the_importance_sampled_lambda_return():
    targets, _ = offpac_critic_targets(*critic_inputs(), lambda_=1.0, rho_bar=None, c_bar=None)
    # env 0: rho = c = [2, 0.5, 1]: rho delta = [2, 0.25, 0]; t1: 0.25; t0: 2 + 0.5 * 2 * 0.25
    # = 2.25 -> v = [3.25, 2.25, 3] (env 1 is on-policy: unchanged).
    np.testing.assert_allclose(targets[:, 0], [3.25, 2.25, 3.0], rtol=1e-6)
    np.testing.assert_allclose(targets[:, 1], [1.0, 2.75, 1.5], rtol=1e-6)


def test_on_policy_targets_are_the_bootstrapped_returns():
    # pi = b, lambda 1: v_s is the n-step return of the discounted_returns estimator.
    from rl.rollout.returns import discounted_returns

    rewards, values, discounts, bootstrap, _ = critic_inputs()
    targets, advantages = offpac_critic_targets(
        rewards, values, discounts, bootstrap, tf.zeros([3, 2]), lambda_=1.0
    )
    expected_advantages, returns = discounted_returns(rewards, values, discounts, bootstrap)
    np.testing.assert_allclose(targets, returns, rtol=1e-6)
    np.testing.assert_allclose(advantages, expected_advantages, rtol=1e-6)


def test_actor_loss_is_importance_weighted_and_truncated_by_hand():
    log_prob = tf.Variable([LN(0.5), LN(0.2), LN(0.9)])
    behaviour = tf.constant([LN(0.25), LN(0.4), LN(0.9)])  # rho = [2, 0.5, 1]
    advantage = tf.constant([1.125, 0.5, -2.0])
    with tf.GradientTape() as tape:
        loss, rho_mean, clip_fraction = offpac_actor_loss(log_prob, behaviour, advantage, 1.0)
    # weights [1, 0.5, 1]: -(ln 0.5 * 1.125 + ln 0.2 * 0.25 + ln 0.9 * -2) / 3
    # = -(-0.779791 - 0.402359 + 0.210721) / 3 = 0.323810.
    assert float(loss) == pytest.approx(0.323810, rel=1e-5)
    # d loss / d log pi = -w A / 3 = [-0.375, -0.083333, 0.666667]; nothing flows into rho.
    np.testing.assert_allclose(tape.gradient(loss, log_prob), [-0.375, -1 / 12, 2 / 3], rtol=1e-5)
    assert float(rho_mean) == pytest.approx(3.5 / 3, rel=1e-6)
    assert float(clip_fraction) == pytest.approx(1 / 3)
    # Untruncated (the paper's weights): -(ln 0.5 * 2.25 + ...) / 3.
    untruncated, _, none_clipped = offpac_actor_loss(log_prob, behaviour, advantage, None)
    expected = -(LN(0.5) * 2.25 + LN(0.2) * 0.25 + LN(0.9) * -2.0) / 3
    assert float(untruncated) == pytest.approx(expected, rel=1e-5)
    assert float(none_clipped) == 0.0


def test_losses_are_registered():
    for name in ("offpac_actor_loss", "offpac_critic_targets", "truncated_importance_weights"):
        assert name in registry.gradient_functions


# ---------------------------------------------------------------------------- the agent
def make_agent(overrides: str = ""):
    # Without XLA: these tests check mechanics, and compiling costs seconds per agent (train.py
    # runs offpac_tiny with XLA in tests/test_train_smoke.py).
    hp = registry.get_hparams("offpac_tiny")()
    hp.override(",".join(filter(None, ["jit_compile=False", overrides])))
    hp.freeze()
    env, spec = make_vector_env(hp.env, hp.num_envs, seed=0, max_episode_steps=hp.max_episode_steps)
    agent = registry.get_agent(hp.agent)(spec, hp, seed=0)
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    return agent, driver


def test_agent_loss_on_a_hand_made_segment():
    agent, _ = make_agent(
        "gamma=0.5,ent_coef=0.01,vf_coef=0.5,trace_lambda=1.0,rho_bar=1.0,c_bar=1.0"
    )
    model = agent.model
    for weight in model.policy_head.weights + model.value_head.weights:
        weight.assign(tf.zeros_like(weight))  # pi uniform (ln 1/2), V = 0 everywhere
    segment = {  # one segment (B=1) of T=3 steps, no episode end, b(a|s) = 1/4 -> rho = 2
        "obs": tf.zeros([1, 3, 4]),
        "action": tf.constant([[0, 1, 0]], tf.int64),
        "reward": tf.ones([1, 3]),
        "terminated": tf.zeros([1, 3], tf.bool),
        "truncated": tf.zeros([1, 3], tf.bool),
        "final_obs": tf.zeros([1, 3, 4]),
        "log_prob": tf.fill([1, 3], LN(0.25)),
        "last_next_obs": tf.zeros([1, 4]),
    }
    loss, aux = agent.loss(segment)
    # rho_bar = c = 1, delta = r = 1: v - V = [1 + 0.5 (1 + 0.5), 1 + 0.5, 1] = [1.75, 1.5, 1];
    # A = r + 0.5 v' = [1.75, 1.5, 1]. policy loss = ln 2 * 4.25 / 3 = 0.981958;
    # value loss = 0.5 (1.75^2 + 1.5^2 + 1) / 3 = 1.052083; entropy ln 2 = 0.693147.
    # loss = 0.981958 + 0.5 * 1.052083 - 0.01 * 0.693147 = 1.501069.
    assert float(aux["policy_loss"]) == pytest.approx(0.981958, rel=1e-5)
    assert float(aux["value_loss"]) == pytest.approx(1.052083, rel=1e-5)
    assert float(aux["entropy"]) == pytest.approx(LN(2.0), rel=1e-5)
    assert float(aux["rho_mean"]) == pytest.approx(2.0, rel=1e-5)
    assert float(aux["rho_clip_fraction"]) == 1.0
    assert float(loss) == pytest.approx(1.501069, rel=1e-5)


def test_update_fills_the_replay_and_runs_every_gradient_step_in_one_call():
    agent, driver = make_agent()
    hp = agent.hparams  # 2 envs x 16-step segments, 8-segment replay, learning_starts 64
    driver.collect(agent.steps_per_iteration)
    assert agent.update() == {}  # 32 env steps < learning_starts: stored, not learned from
    assert len(agent.replay) == 2 and len(agent.rollout) == 0
    sizes = []
    for _ in range(4):
        driver.collect(agent.steps_per_iteration)
        sizes.append(agent.update()["train/replay_size"])
    assert sizes == [4.0, 6.0, 8.0, 8.0]  # capped at replay_capacity
    assert int(agent.learner.gradient_steps.numpy()) == 4 * hp.gradient_steps
    assert agent.train_on_batch.experimental_get_tracing_count() == 1
    # A checkpoint holds the replay and the partial segment (cut as truncations).
    driver.collect(5)
    agent.end_all_episodes()
    state = agent.numpy_state()
    assert int(state["replay/size"]) == 8 and int(state["rollout/t"]) == 5
    assert (state["rollout/truncated"][4] | state["rollout/terminated"][4]).all()
    restored, _ = make_agent()
    restored.load_numpy_state(state)
    assert len(restored.replay) == 8 and len(restored.rollout) == 5
    # Same rows and the same sampler RNG: the next replayed batch is identical.
    a, b = agent.replay.sample(4, 2), restored.replay.sample(4, 2)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_replayed_data_keep_the_acting_log_probs_and_drift_off_policy():
    agent, driver = make_agent("learning_starts=0,lr=0.01")
    driver.collect(agent.steps_per_iteration)
    data = {k: v.copy() for k, v in agent.rollout.data().items()}
    rollout = Rollout.from_batch(data)
    # Stored log b(a|s) are the acting weights' log-probs: re-evaluated now, pi / b = 1.
    np.testing.assert_allclose(reevaluate(rollout, agent.model).log_prob, data["log_prob"],
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    for _ in range(3):
        agent.update()
        driver.collect(agent.steps_per_iteration)
    # After learning, the same stored steps are off-policy: pi / b moved away from 1.
    log_rho = reevaluate(rollout, agent.model).log_prob.numpy() - data["log_prob"]
    assert np.abs(log_rho).max() > 1e-3


def test_box_actions_learn_the_gaussian_spread():
    agent, driver = make_agent("env=Pendulum-v1,learning_starts=0")
    assert agent.spec.action_shape == (1,)
    for _ in range(2):
        driver.collect(agent.steps_per_iteration)
        metrics = agent.update()
    assert np.isfinite(metrics["train/loss"])
    assert not np.allclose(agent.model.log_std.numpy(), [0.0])  # trained with the rest
    mean = agent.model.policy(tf.zeros([1, 3])).numpy()
    np.testing.assert_allclose(agent.greedy_actions(np.zeros([1, 3], np.float32)),
                               np.clip(mean, -2.0, 2.0), rtol=1e-6)  # fmt: skip
