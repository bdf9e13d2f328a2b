"""Float hparams an agent reads while training follow a schedule of the step, by hand: A2C's
ent_coef and vf_coef (gradient step), DQN's tau (gradient step) and per_alpha (env step). The
other keys, and the one-line refusal of a key that stays a number, are in
test_schedules_of_every_training_float.py."""

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.agents.on_policy import PolicyOutputs
from rl.envs import make_vector_env
from rl.rollout.driver import Driver


def build(set_name: str, overrides: str, env_id: str = "CartPole-v1"):
    hp = registry.get_hparams(set_name)()
    hp.override(overrides)
    hp.freeze()
    env, spec = make_vector_env(env_id, hp.num_envs, seed=0)
    return registry.get_agent(hp.agent)(spec, hp, seed=0), env, spec


def test_a2c_loss_weights_follow_their_schedules_of_the_gradient_step():
    # ent_coef: 0.1 -> 0 over 10 gradient steps; vf_coef: 1.0 -> 0.5 over 10.
    agent, env, _ = build("a2c_tiny", "ent_coef=linear(0.1, 0.0, 10),vf_coef=linear(1.0, 0.5, 10)")
    env.close()
    # Advantage 0 (no policy term), V - R = 1 on both samples, entropy 2 on both.
    minibatch = {
        "advantage": tf.zeros([2]),
        "return": tf.zeros([2]),
        "mask": tf.ones([2]),
    }
    outputs = PolicyOutputs(log_prob=tf.zeros([2]), entropy=tf.fill([2], 2.0), value=tf.ones([2]))
    for step, vf_coef, ent_coef in ((0, 1.0, 0.1), (5, 0.75, 0.05), (20, 0.5, 0.0)):
        agent.learner.gradient_steps.assign(step)
        loss, aux = agent.loss(minibatch, outputs)
        # loss = vf_coef * value_loss - ent_coef * mean entropy, value_loss = 0.5 mean (V-R)^2
        assert float(aux["value_loss"]) == pytest.approx(0.5)
        assert float(loss) == pytest.approx(vf_coef * 0.5 - ent_coef * 2.0, abs=1e-6)


def test_dqn_target_update_rate_follows_tau_of_the_gradient_step():
    # tau 1.0 -> 0.0 over 4 gradient steps, a target update before every step.
    agent, env, spec = build(
        "dqn_tiny",
        "tau=linear(1.0, 0.0, 4),target_update_period=1,gradient_steps=1,learning_starts=8,"
        "batch_size=8,train_every=1",
    )
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(16)  # replay past learning_starts
    for step in range(5):
        assert int(agent.learner.gradient_steps.numpy()) == step
        online = [v.numpy() for v in agent.q_network.variables]
        target = [v.numpy() for v in agent.target_network.variables]
        assert agent.update()  # the target update (at this step's tau), then one gradient step
        tau = max(0.0, 1.0 - step / 4)
        for before_online, before_target, after in zip(
            online, target, agent.target_network.variables, strict=True
        ):
            expected = tau * before_online + (1.0 - tau) * before_target
            np.testing.assert_allclose(after.numpy(), expected, rtol=1e-6, atol=1e-7)
        if step >= 4:  # tau 0: the target no longer moves
            for before_target, after in zip(target, agent.target_network.variables, strict=True):
                np.testing.assert_array_equal(after.numpy(), before_target)
    env.close()


def prioritized_dqn(overrides: str):
    """dqn_tiny with prioritized replay, one gradient step per update, 16 steps collected."""
    agent, env, spec = build(
        "dqn_tiny",
        f"memory=prioritized,{overrides},gradient_steps=1,learning_starts=8,batch_size=8,"
        "train_every=1",
    )
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(16)
    return agent, env


def update_priorities_at(agent, env_step: int) -> tuple[np.ndarray, np.ndarray]:
    """One prioritized update at `env_step` on a batch sampled first; returns (|TD errors| of
    that batch, the priorities then stored for its rows)."""
    agent.env_steps.assign(env_step)
    batch = agent.replay.sample(8, num_batches=1, beta=0.4)
    indices = batch["indices"][0]
    agent.replay.sample = lambda *args, **kwargs: dict(batch)
    try:
        td_error = np.abs(agent.sample_and_train()["td_error"].numpy()[0])
    finally:
        del agent.replay.sample  # the replay's own method again
    return td_error, agent.replay.get_priorities(indices)


def test_dqn_priority_exponent_follows_per_alpha_of_the_env_step():
    # per_alpha 1.0 -> 0.5 over 1000 env steps: the |TD errors| of an update are stored as
    # (|delta| + 0.01)^alpha with alpha at the env step of that update (0.8 at 400, 0.5 at 1000+).
    agent, env = prioritized_dqn("per_alpha=linear(1.0, 0.5, 1000),per_epsilon=0.01")
    assert agent.replay.alpha == 1.0  # built at env step 0
    for env_step, alpha in ((400, 0.8), (1500, 0.5)):
        td_error, stored = update_priorities_at(agent, env_step)
        assert td_error.max() > 0.05  # far enough from 1 that the exponent shows
        np.testing.assert_allclose(stored, (td_error + 0.01) ** alpha, rtol=1e-6)
        assert agent.replay.alpha == pytest.approx(alpha)  # float32 schedule
    env.close()


def test_a_key_that_became_a_schedule_is_not_translated_on_resume():
    # No compatibility layer (docs/run_directory.md): while only this repository writes run
    # dirs, a key whose type changed is a difference like any other, named in the refusal.
    from rl.hparams import HParams, Schedule

    saved = HParams().add("ent_coef", 0.01, "doc")
    now = HParams().add("ent_coef", 0.01, "doc", type=Schedule)
    assert saved.diff(now) == ['ent_coef: float 0.01 -> schedule "constant(0.01)"']


def test_dqn_priority_floor_follows_per_epsilon_of_the_env_step():
    # per_alpha 1 and per_epsilon 0.5 before env step 1000, 0.01 from it on: an update stores
    # |delta| + epsilon with epsilon at the env step of that update.
    agent, env = prioritized_dqn("per_alpha=1.0,per_epsilon=piecewise([1000], [0.5, 0.01])")
    assert agent.replay.epsilon == 0.5  # built at env step 0
    for env_step, epsilon in ((400, 0.5), (1500, 0.01)):
        td_error, stored = update_priorities_at(agent, env_step)
        np.testing.assert_allclose(stored, td_error + epsilon, rtol=1e-6)
        assert agent.replay.epsilon == pytest.approx(epsilon)  # float32 schedule
    env.close()
