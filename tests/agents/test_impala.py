"""IMPALA: the loss by hand, the agent's wiring of V-trace (against a numpy recomputation),
behaviour log-probs recorded at acting time, off-policy passes, and unrolls between processes."""

import numpy as np
import pytest
import tensorflow as tf
from test_vtrace import reference_vtrace

from rl.agents.gradient_functions.impala import impala_loss
from rl.envs import make_vector_env
from rl.errors import UserError
from rl.registry import get_agent, get_gradient_function, get_hparams
from rl.rollout.driver import Driver


def test_impala_loss_by_hand():
    # policy: -mean(log_prob * A) = -mean(-0.5 * 2, -1.0 * 1) = 1.0
    # value: 0.5 * mean((1 - 1.5)^2, (2 - 1)^2) = 0.5 * mean(0.25, 1) = 0.3125
    # entropy: mean(0.6, 0.7) = 0.65
    # loss = 1.0 + 0.5 * 0.3125 - 0.01 * 0.65 = 1.14975
    log_prob = tf.constant([-0.5, -1.0])
    value = tf.constant([1.0, 2.0])
    advantage, vs = tf.constant([2.0, 1.0]), tf.constant([1.5, 1.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([log_prob, value, advantage, vs])
        loss, aux = impala_loss(log_prob, tf.constant([0.6, 0.7]), value, advantage, vs, 0.5, 0.01)
    assert loss.numpy() == pytest.approx(1.14975)
    assert aux["policy_loss"].numpy() == pytest.approx(1.0)
    assert aux["value_loss"].numpy() == pytest.approx(0.3125)
    assert aux["entropy"].numpy() == pytest.approx(0.65)
    # d loss / d log_prob = -A / 2 = [-1, -0.5];
    # d loss / d V = 0.5 (vf_coef) * 0.5 * 2 (V - v) / 2 = [0.5 * -0.5 / 2, 0.5 * 1 / 2]
    np.testing.assert_allclose(tape.gradient(loss, log_prob), [-1.0, -0.5], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, value), [-0.125, 0.25], rtol=1e-6)
    # The V-trace targets are constants.
    assert tape.gradient(loss, advantage) is None and tape.gradient(loss, vs) is None
    # A mask drops the second sample: policy 1.0, value 0.5 * 0.25, entropy 0.6.
    masked, _ = impala_loss(log_prob, tf.constant([0.6, 0.7]), value, advantage, vs, 0.5, 0.01,
                            mask=tf.constant([1.0, 0.0]))  # fmt: skip
    assert masked.numpy() == pytest.approx(1.0 + 0.5 * 0.125 - 0.01 * 0.6)
    assert get_gradient_function("impala_loss") is impala_loss


def _agent(env="CartPole-v1", num_envs=4, unroll=12, max_episode_steps=8, **overrides):
    hp = get_hparams("impala_tiny")()
    hp.env, hp.num_envs, hp.train_every = env, num_envs, num_envs * unroll
    hp.max_episode_steps = max_episode_steps
    for key, value in overrides.items():
        setattr(hp, key, value)
    hp.freeze()
    vec_env, spec = make_vector_env(hp.env, num_envs, 0, max_episode_steps=max_episode_steps)
    agent = get_agent("impala")(spec, hp, seed=3)
    driver = Driver(vec_env, spec, agent)
    driver.reset(seed=7)
    return agent, driver, vec_env


def _current_log_prob(agent, data):
    spec = agent.spec
    obs = data["obs"].reshape(-1, *spec.obs_shape)
    action = data["action"].reshape(-1, *spec.action_shape)
    params = agent.model.policy(obs)
    log_prob = agent.model.distribution(params).log_prob(agent.model.flatten_action(action))
    return log_prob.numpy().reshape(data["reward"].shape)


@pytest.mark.parametrize("env", ["CartPole-v1", "Pendulum-v1"])
def test_behaviour_log_probs_are_recorded_while_acting(env):
    agent, driver, vec_env = _agent(env)
    driver.collect(agent.unroll_length)
    data = agent.rollout.data()
    assert agent.rollout.full()
    # No update ran: the recorded log mu(a|x) equals log pi(a|x) of the same weights, and is a
    # real log-prob (not the buffer's zero default).
    np.testing.assert_allclose(data["log_prob"], _current_log_prob(agent, data), atol=1e-5)
    assert np.all(data["log_prob"] < 0.0) if env == "CartPole-v1" else np.any(data["log_prob"])
    vec_env.close()


def test_agent_loss_is_vtrace_on_the_current_network():
    """The agent's minibatch loss equals a numpy recomputation: truncations folded with
    V(final_obs), V(last_next_obs) as bootstrap, log rho = log pi - log mu (behaviour log-probs
    made different from pi so that clipping binds), the paper's V-trace sum, the loss."""
    agent, driver, vec_env = _agent(num_minibatches=1, vtrace_rho_bar=1.2, vtrace_c_bar=0.9)
    driver.collect(agent.unroll_length)
    data = {k: v.copy() for k, v in agent.rollout.data().items()}
    assert data["truncated"].any()  # episodes of 8 steps in a 12-step unroll
    rng = np.random.default_rng(0)
    data["log_prob"] -= rng.normal(scale=0.5, size=data["log_prob"].shape).astype(np.float32)
    hp, model = agent.hparams, agent.model
    n, shape = data["reward"].size, data["reward"].shape
    params, values = model(data["obs"].reshape(n, -1))
    distribution = model.distribution(params)
    log_prob = distribution.log_prob(data["action"].reshape(n)).numpy().reshape(shape)
    entropy = distribution.entropy().numpy().reshape(shape)
    values = values.numpy().reshape(shape)
    final_values = model.value(data["final_obs"].reshape(n, -1)).numpy().reshape(shape)
    bootstrap = model.value(data["last_next_obs"]).numpy()
    rewards = data["reward"] + hp.gamma * data["truncated"] * final_values
    ended = data["terminated"] | data["truncated"]
    discounts = hp.gamma * (1.0 - ended)
    log_rhos = log_prob - data["log_prob"]
    assert (np.exp(log_rhos) > 1.2).any()  # rho_bar binds somewhere
    advantages, vs = reference_vtrace(rewards, values, discounts, bootstrap, log_rhos,
                                      rho_bar=1.2, c_bar=0.9, lambda_=1.0)  # fmt: skip
    expected = (
        -np.mean(log_prob * advantages)
        + hp.vf_coef.value(0) * 0.5 * np.mean((values - vs) ** 2)
        - hp.ent_coef.value(0) * np.mean(entropy)
    )
    batch = {k: tf.constant(data[k]) for k in agent.batch_spec}
    loss, aux = agent.minibatch_loss(batch)
    assert loss.numpy() == pytest.approx(expected, rel=1e-4)
    assert aux["rho_mean"].numpy() == pytest.approx(np.mean(np.exp(log_rhos)), rel=1e-4)
    assert aux["rho_clip_fraction"].numpy() == pytest.approx(np.mean(np.exp(log_rhos) > 1.2))
    vec_env.close()


def test_first_pass_is_on_policy_and_later_passes_are_not():
    # One gradient step on fresh data: pi = mu, every rho is 1 and KL(mu || pi) is 0.
    agent, driver, vec_env = _agent(n_epochs=1, num_minibatches=1)
    driver.collect(agent.unroll_length)
    metrics = agent.update()
    assert metrics["train/rho_mean"] == pytest.approx(1.0, abs=1e-5)
    assert metrics["train/approx_kl"] == pytest.approx(0.0, abs=1e-6)
    assert int(agent.learner.gradient_steps.numpy()) == 1
    assert not agent.rollout.full() and len(agent.rollout) == 0
    vec_env.close()
    # Three passes of two minibatches: after the first step the data are off-policy.
    agent, driver, vec_env = _agent(n_epochs=3, num_minibatches=2, lr=1e-2)
    driver.collect(agent.unroll_length)
    metrics = agent.update()
    assert int(agent.learner.gradient_steps.numpy()) == 6
    assert metrics["train/approx_kl"] > 1e-6
    assert metrics["train/rho_mean"] != pytest.approx(1.0, abs=1e-5)
    assert np.isfinite([metrics[f"train/{k}"] for k in agent.loss_metrics]).all()
    vec_env.close()


def test_unrolls_travel_from_actors_to_the_learner():
    from rl.workers.unrolls import add_unroll, pop_unroll

    # Two actors with 2 env copies each fill the learner's batch of 4 env copies.
    actors = [_agent(num_envs=2, unroll=6) for _ in range(2)]
    learner, _, learner_env = _agent(num_envs=4, unroll=6)
    unrolls = []
    for agent, driver, _ in actors:
        driver.collect(agent.unroll_length)
        unrolls.append(pop_unroll(agent))
        assert len(agent.rollout) == 0
    batch = {
        key: np.concatenate([u[key] for u in unrolls], axis=0 if key == "last_next_obs" else 1)
        for key in unrolls[0]
    }
    add_unroll(learner, batch)
    assert learner.rollout.full()
    np.testing.assert_array_equal(learner.rollout.data()["log_prob"][:, 2:], unrolls[1]["log_prob"])
    metrics = learner.update()
    assert np.isfinite(metrics["train/loss"]) and int(learner.learner.gradient_steps.numpy()) == 4
    with pytest.raises(ValueError, match="obs"):
        add_unroll(learner, unrolls[0])  # 2 env copies where the learner batches 4
    with pytest.raises(RuntimeError, match="pop_unroll"):
        pop_unroll(actors[0][0])  # nothing collected since the last unroll
    for _, _, env in (*actors, (None, None, learner_env)):
        env.close()


def test_too_many_minibatches_is_a_user_error():
    with pytest.raises(UserError, match="num_minibatches=5"):
        _agent(num_envs=4, num_minibatches=5)


def test_an_agent_for_one_test_episode_builds_with_the_training_minibatches():
    # Test mode (`--test_episodes 1`) and export build the agent for a vector env of 1 copy; the
    # check reads the 4 training copies, which num_minibatches=2 splits.
    hp = get_hparams("impala_tiny")()
    hp.num_envs, hp.num_minibatches = 4, 2
    hp.freeze()
    vec_env, spec = make_vector_env(hp.env, 1, 0)
    vec_env.close()
    agent = get_agent("impala")(spec, hp, seed=3)
    assert agent.greedy_actions(np.zeros((1, *spec.obs_shape), np.float32)).shape == (1,)
