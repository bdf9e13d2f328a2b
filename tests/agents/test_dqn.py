"""DQN agent: what reaches the replay at episode ends, schedules taking effect, updates."""

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.envs import make_vector_env
from rl.rollout.driver import Driver


def make_agent(overrides: str = "", num_envs: int = 1, max_episode_steps: int | None = None):
    hp = registry.get_hparams("dqn_tiny")()
    hp.jit_compile = False  # seconds of XLA compile per test; training tests run XLA
    hp.override(overrides)
    hp.num_envs = num_envs
    hp.max_episode_steps = max_episode_steps
    hp.freeze()
    env, spec = make_vector_env(
        "CartPole-v1", num_envs, seed=0, max_episode_steps=max_episode_steps
    )
    agent = registry.get_agent("dqn")(spec, hp, seed=0)
    return agent, env, spec


def test_truncation_bootstraps_and_termination_does_not():
    # A 5-step time limit truncates every episode that CartPole does not end first. The stored
    # transition of a truncated step must keep discount gamma (bootstrap from the true final
    # observation), a terminated one must have discount 0, and next_obs must be the episode's
    # last observation, not the reset observation the vector env returns.
    agent, env, spec = make_agent("memory=uniform,n_step=1,gamma=0.9", max_episode_steps=5)
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    finals, resets, endings = [], [], []
    original_step = env.step

    def recording_step(action):
        out = original_step(action)
        next_obs, _, terminated, truncated, info = out
        if terminated[0] or truncated[0]:
            finals.append(info["final_obs"][0].copy())
            resets.append(next_obs[0].copy())
            endings.append("terminated" if terminated[0] else "truncated")
        return out

    env.step = recording_step
    driver.collect(60)
    replay = agent.replay
    stored = {k: replay.storage.gather(np.arange(len(replay)))[k] for k in ("next_obs", "discount")}
    assert "truncated" in endings
    # Every episode end recorded by the env appears as a transition with the right discount.
    for final, reset, ending in zip(finals, resets, endings, strict=False):
        rows = np.flatnonzero((stored["next_obs"] == final).all(-1))
        assert len(rows) == 1, "the final observation is stored as next_obs exactly once"
        expected = 0.0 if ending == "terminated" else 0.9
        assert stored["discount"][rows[0]] == pytest.approx(expected)
        assert not (stored["next_obs"] == reset).all(-1).any(), "reset obs must never be next_obs"
    # Steps inside episodes bootstrap with gamma.
    assert (stored["discount"] == np.float32(0.9)).sum() > len(finals)


def test_n_step_transitions_reach_replay_with_gamma_power():
    agent, env, spec = make_agent("memory=uniform,n_step=3,gamma=0.5", max_episode_steps=50)
    driver = Driver(env, spec, agent)
    driver.reset(seed=1)
    driver.collect(40)
    discount = agent.replay.storage.gather(np.arange(len(agent.replay)))["discount"]
    # Mid-episode rows cover 3 steps: discount 0.5^3; CartPole rewards are 1 per step, so their
    # reward is 1 + 0.5 + 0.25 = 1.75.
    full = discount == np.float32(0.125)
    assert full.sum() > 0
    reward = agent.replay.storage.gather(np.arange(len(agent.replay)))["reward"]
    np.testing.assert_allclose(reward[full], 1.75)


def test_learning_rate_schedule_takes_effect_inside_the_compiled_update():
    agent, env, spec = make_agent("lr=linear(0.01, 0.001, 8),gradient_steps=4,learning_starts=0")
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(40)
    agent.update()  # gradient steps 0..3: lr at step 3 = 0.01 - 3/8 * 0.009 = 0.006625
    assert int(agent.learner.gradient_steps.numpy()) == 4
    assert agent.learner.optimizer.learning_rate.numpy() == pytest.approx(0.006625, rel=1e-5)
    agent.update()
    agent.update()  # steps 8..11: clamped at the end value
    assert agent.learner.optimizer.learning_rate.numpy() == pytest.approx(0.001, rel=1e-5)


def test_epsilon_schedule_and_random_actions_before_learning_starts():
    agent, *_ = make_agent("epsilon=linear(1.0, 0.1, 1000),learning_starts=100")
    assert agent.metrics()["train/epsilon"] == pytest.approx(1.0)
    agent.env_steps.assign(50)
    assert agent.metrics()["train/epsilon"] == pytest.approx(1.0)  # before learning starts
    agent.env_steps.assign(500)
    assert agent.metrics()["train/epsilon"] == pytest.approx(0.55)  # 1 - 0.9 * 500/1000


def test_update_reduces_loss_on_a_fixed_batch_and_syncs_target():
    agent, env, spec = make_agent(
        "memory=uniform,gradient_steps=32,learning_starts=0,target_update_period=1000,lr=0.01"
    )
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(100)
    batch = agent.replay.sample(16, num_batches=1)
    batch.pop("indices")
    first = float(agent.train_on_batch(batch)["loss"])
    repeated = {k: tf.repeat(v, 32, axis=0) for k, v in batch.items()}
    last = float(agent.train_on_batch(repeated)["loss"])
    assert last < first
    # target_update_period=1000: synced only at gradient step 0, so the target equals the
    # online weights from before the first step, not the current ones.
    online = agent.q_network.get_weights()
    target = agent.target_network.get_weights()
    assert any(not np.array_equal(o, t) for o, t in zip(online, target, strict=False))


def test_dqn_refuses_continuous_actions_with_a_user_error():
    hp = registry.get_hparams("dqn_tiny")()
    hp.freeze()
    env, spec = make_vector_env("Pendulum-v1", 1, seed=0)
    with pytest.raises(rl.errors.UserError, match="discrete action space"):
        registry.get_agent("dqn")(spec, hp, seed=0)


def test_driver_passes_act_with_info_extras_to_observe():
    agent, env, spec = make_agent("memory=uniform,n_step=1")
    seen = []

    def act_with_info(obs):
        action = agent.act(obs, explore=True)
        return action, {"value": tf.cast(action, tf.float32) * 10.0, "log_prob": -tf.ones([1])}

    agent.act_with_info = act_with_info
    original_observe = agent.observe

    def observe(transition):
        seen.append((transition["action"].copy(), transition["value"], transition["log_prob"]))
        original_observe({k: v for k, v in transition.items() if k not in ("value", "log_prob")})

    agent.observe = observe
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(5)
    assert len(seen) == 5
    for action, value, log_prob in seen:
        np.testing.assert_allclose(value, action * 10.0)
        np.testing.assert_allclose(log_prob, [-1.0])
