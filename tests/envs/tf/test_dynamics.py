"""The TF-ops envs against gymnasium's own implementations, step by step.

Each env and gymnasium's env start from the same state (gymnasium's `env.unwrapped.state`
copied into the TF state after every gymnasium reset), take the same actions (random with a
fixed seed, mixed with an energy-pumping controller so goals are reached, see `_actions`) for
whole episodes, and must return the same observations, rewards, `terminated` and
`truncated` at every step, the steps that end an episode (time limit included) too. Between
resets the TF env runs on its own state ("episode" mode), except where noted ("step" mode:
gymnasium's state is copied in before every step, so only one step's error is measured).

Tolerances (absolute; observations / rewards) that hold, and what was observed:
- float64: CartPole, MountainCar and Pendulum do gymnasium's float64 arithmetic in the same
  order, so observations are bit-equal (observed 0); rewards differ only by their float32 cast
  (Pendulum: 9e-7 of |r| <= 16.3). Acrobot: 1e-4 over whole 500-step episodes (observed 0 here,
  up to 2e-6 with other seeds): TF's and numpy's sin/cos may differ in the last bit and the
  double pendulum is chaotic. MountainCarContinuous: 1e-4 (observed 4e-6), because gymnasium
  rounds that env's state to float32 after every step.
- float32 (the default, fast path): one step from gymnasium's state ("step" mode) agrees to
  float32 rounding for all five: observations 1e-5 (observed <= 3.4e-6), rewards 1e-5
  (Pendulum 1e-4, observed 2.3e-5 of |r| <= 16.3). Whole episodes: CartPole and MountainCar
  1e-5 (observed 7e-7, 3e-7), MountainCarContinuous 1e-4 (observed 1e-5), Pendulum 2e-3 /
  5e-3 (observed 3e-4 / 1.1e-3: its angle is not wrapped, so float32 resolution of theta drops
  as it spins). Acrobot in float32 leaves gymnasium's trajectory within an episode (chaos), so
  it is checked in step mode only.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.envs import make_vector_env
from rl.envs.spec import EnvSpec
from rl.envs.tf import ENVS, DiscreteSpec, TFEnv, make_tf_env
from rl.envs.tf.base import uniform_draws
from rl.errors import UserError

GYM_IDS = ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1"]

# (gym id, dtype, mode) -> (obs atol, reward atol, steps): enough steps for several episodes,
# including one that ends by the time limit (time limits shortened where noted).
CASES = {
    ("CartPole-v1", "float64", "episode"): (1e-12, 0.0, 300),
    ("CartPole-v1", "float32", "episode"): (1e-5, 0.0, 300),
    ("Acrobot-v1", "float64", "episode"): (1e-4, 0.0, 520),
    ("MountainCar-v0", "float64", "episode"): (1e-12, 0.0, 420),
    ("MountainCar-v0", "float32", "episode"): (1e-5, 0.0, 420),
    ("MountainCarContinuous-v0", "float64", "episode"): (1e-4, 1e-5, 420),
    ("MountainCarContinuous-v0", "float32", "episode"): (1e-4, 1e-5, 420),
    ("Pendulum-v1", "float64", "episode"): (1e-12, 2e-6, 420),
    ("Pendulum-v1", "float32", "episode"): (2e-3, 5e-3, 420),
    # one step from gymnasium's state: float32 rounding only (Acrobot float32: only this)
    ("CartPole-v1", "float32", "step"): (1e-5, 0.0, 300),
    ("Acrobot-v1", "float32", "step"): (1e-5, 0.0, 520),
    ("MountainCar-v0", "float32", "step"): (1e-5, 0.0, 420),
    ("MountainCarContinuous-v0", "float32", "step"): (1e-5, 1e-5, 420),
    ("Pendulum-v1", "float32", "step"): (1e-5, 1e-4, 420),  # |reward| up to 16.3
}
# Shorter time limits (applied to both sides) so truncations happen within the steps above.
# CartPole: 25 is near a random policy's mean episode length, so terminations and truncations
# both occur.
TIME_LIMITS = {"CartPole-v1": 25, "MountainCarContinuous-v0": 200}
NUM_ENVS = 3


# gymnasium's reset distributions: (low, high) per state variable (None: fixed at 0).
RESET_RANGES = {
    "CartPole-v1": [(-0.05, 0.05)] * 4,
    "Acrobot-v1": [(-0.1, 0.1)] * 4,
    "MountainCar-v0": [(-0.6, -0.4), None],
    "MountainCarContinuous-v0": [(-0.6, -0.4), None],
    "Pendulum-v1": [(-np.pi, np.pi), (-1.0, 1.0)],
}


# Energy-pumping controllers (from gymnasium's state), so that episodes also end by reaching the
# goal and the clipping branches run: MountainCar's left wall, Pendulum's speed limit,
# MountainCarContinuous' action clipping and +100 goal reward, Acrobot's termination.
PUMP = {
    "MountainCar-v0": lambda s: 2 if s[1] > 0 else 0,
    "MountainCarContinuous-v0": lambda s: np.array([1.5 if s[1] > 0 else -1.5], np.float32),
    "Acrobot-v1": lambda s: 2 if s[3] > 0 else 0,
    "Pendulum-v1": lambda s: np.array([2.5 if s[1] > 0 else -2.5], np.float32),
}


def _actions(gym_id: str, gyms: list[gym.Env], rng: np.random.Generator) -> np.ndarray:
    """Env 0 acts at random (its episodes run into the time limit); the others pump energy
    80% of the time (their episodes reach the goal), at random otherwise."""
    space = gyms[0].action_space
    actions = []
    for i, g in enumerate(gyms):
        if i > 0 and gym_id in PUMP and rng.random() < 0.8:
            actions.append(PUMP[gym_id](np.asarray(g.unwrapped.state)))
        elif isinstance(space, gym.spaces.Discrete):
            actions.append(rng.integers(0, space.n))
        else:  # beyond the bounds too: clipping (MountainCarContinuous' reward uses the raw a)
            high = float(space.high[0])
            actions.append(rng.uniform(-1.5 * high, 1.5 * high, (1,)).astype(np.float32))
    return np.stack(actions)


@pytest.mark.parametrize("gym_id, dtype, mode", list(CASES))
def test_matches_gymnasium(gym_id: str, dtype: str, mode: str):
    obs_atol, reward_atol, num_steps = CASES[gym_id, dtype, mode]
    limit = TIME_LIMITS.get(gym_id)
    env = make_tf_env("tf/" + gym_id, dtype=dtype, max_episode_steps=limit)
    step = tf.function(env.step)
    gyms = [gym.make(gym_id, max_episode_steps=limit) for _ in range(NUM_ENVS)]
    for i, g in enumerate(gyms):
        g.reset(seed=100 + i)
    state, _ = env.reset(0, NUM_ENVS)
    state = env.with_physics(state, [np.asarray(g.unwrapped.state, np.float64) for g in gyms])
    rng = np.random.default_rng(1)
    ends = {"terminated": 0, "truncated": 0}
    gym_elapsed = [0] * len(gyms)  # steps into each gymnasium env's episode
    for t in range(num_steps):
        action = _actions(gym_id, gyms, rng)
        state, ts = step(state, tf.constant(action))
        obs, final_obs = ts.obs.numpy(), ts.final_obs.numpy()
        reward, terminated, truncated = (x.numpy() for x in ts[1:4])
        tf_physics = state.physics.numpy().astype(np.float64)
        elapsed, episode = state.elapsed.numpy(), state.episode.numpy()
        for i, g in enumerate(gyms):
            g_obs, g_reward, g_terminated, g_truncated, _ = g.step(action[i])
            gym_elapsed[i] += 1
            where = f"{gym_id} {dtype} {mode} mode, step {t}, env {i}"
            np.testing.assert_allclose(final_obs[i], g_obs, rtol=0, atol=obs_atol, err_msg=where)
            np.testing.assert_allclose(reward[i], g_reward, 1e-7, reward_atol, err_msg=where)
            assert (terminated[i], truncated[i]) == (g_terminated, g_truncated), where
            if g_terminated or g_truncated:
                ends["terminated"] += g_terminated
                ends["truncated"] += g_truncated
                # same-step auto-reset: the TF env already started its next episode
                assert elapsed[i] == 0 and episode[i] >= 1, where
                np.testing.assert_array_equal(obs[i], env.observe(state).numpy()[i])
                assert not np.array_equal(obs[i], final_obs[i]), where
                g.reset(seed=1000 + NUM_ENVS * t + i)
                gym_elapsed[i] = 0
                tf_physics[i] = g.unwrapped.state
            else:
                assert elapsed[i] == gym_elapsed[i], where
                np.testing.assert_array_equal(obs[i], final_obs[i])
                if mode == "step":
                    tf_physics[i] = g.unwrapped.state
        state = env.with_physics(state, tf_physics)
    assert ends["truncated"] >= 1, ends  # a time-limit end was crossed
    if gym_id != "Pendulum-v1":  # Pendulum never terminates
        assert ends["terminated"] >= 1, ends  # and a goal/failure end
    assert sum(ends.values()) >= 2, ends


def _sample_actions(env: TFEnv, seed: tf.Tensor, num_envs: int) -> tf.Tensor:
    """Random actions from a stateless op keyed by `seed` (works inside XLA loops)."""
    spec = env.action_spec
    if isinstance(spec, DiscreteSpec):
        return tf.random.stateless_uniform([num_envs], seed, 0, spec.n, tf.int32)
    low, high = float(spec.low[0]), float(spec.high[0])
    return tf.random.stateless_uniform([num_envs, 1], seed, low, high)


@pytest.mark.parametrize("env_class", ENVS, ids=lambda c: c.env_id)
def test_compiled_while_loop_of_1000_steps(env_class: type[TFEnv]):
    env = env_class()
    num_envs, num_steps = 8, 1000

    @tf.function(jit_compile=True)
    def rollout(seed):
        state, _ = env.reset(seed, num_envs)

        def body(t, state, ends, reward_sum):
            action = _sample_actions(env, tf.stack([seed, tf.cast(t, tf.int64)]), num_envs)
            state, ts = env.step(state, action)
            done = tf.logical_or(ts.terminated, ts.truncated)
            return t + 1, state, ends + tf.cast(done, tf.int32), reward_sum + ts.reward

        zeros = tf.zeros([num_envs])
        init = (tf.constant(0), state, tf.zeros([num_envs], tf.int32), zeros)
        _, state, ends, reward_sum = tf.while_loop(lambda t, *_: t < num_steps, body, init)
        return state, ends, reward_sum, env.observe(state)

    state, ends, reward_sum, obs = rollout(tf.constant(3, tf.int64))
    # every ended episode advanced that env's RNG counter exactly once
    np.testing.assert_array_equal(state.episode.numpy(), ends.numpy())
    assert np.all(state.elapsed.numpy() < env.max_episode_steps)
    # at least the time limit ends an episode every max_episode_steps steps
    assert np.all(ends.numpy() >= num_steps // env.max_episode_steps)
    assert np.all(np.isfinite(obs.numpy())) and np.all(np.isfinite(reward_sum.numpy()))
    # the compiled program is a pure function of its input
    again = rollout(tf.constant(3, tf.int64))
    np.testing.assert_array_equal(again[3].numpy(), obs.numpy())


@pytest.mark.parametrize("env_class", ENVS, ids=lambda c: c.env_id)
def test_xla_step_agrees_with_graph_step(env_class: type[TFEnv]):
    env = env_class()
    state, _ = env.reset(7, 256)
    action = _sample_actions(env, tf.constant([7, 0], tf.int64), 256)
    _, ts_graph = tf.function(env.step)(state, action)
    _, ts_xla = tf.function(env.step, jit_compile=True)(state, action)
    np.testing.assert_allclose(ts_xla.final_obs, ts_graph.final_obs, rtol=0, atol=1e-5)
    np.testing.assert_allclose(ts_xla.reward, ts_graph.reward, rtol=1e-5, atol=1e-5)


def test_auto_reset_same_step_and_time_limit():
    env = make_tf_env("tf/CartPole-v1", max_episode_steps=3)
    state, first_obs = env.reset(5, 2)
    for t in range(1, 4):
        previous = state
        state, ts = env.step(state, tf.constant([0, 1]))
        if t < 3:
            assert not ts.truncated.numpy().any() and not ts.terminated.numpy().any()
            np.testing.assert_array_equal(ts.obs, ts.final_obs)
            np.testing.assert_array_equal(state.elapsed, [t, t])
    # the third step hits the time limit: truncated (not terminated), reset in the same step
    np.testing.assert_array_equal(ts.truncated, [True, True])
    np.testing.assert_array_equal(ts.terminated, [False, False])
    np.testing.assert_array_equal(state.elapsed, [0, 0])
    np.testing.assert_array_equal(state.episode, [1, 1])
    # final_obs is the last step's physics (Euler from `previous`), obs the new episode's start
    expected_final, _, _ = env.dynamics(previous.physics, tf.constant([0, 1]))
    np.testing.assert_allclose(ts.final_obs, expected_final, rtol=1e-6)
    fresh = uniform_draws(state.key, state.episode, 4, tf.float32) * 0.1 - 0.05
    np.testing.assert_allclose(ts.obs, fresh, atol=1e-7)
    assert not np.allclose(ts.obs, first_obs)


@pytest.mark.parametrize("env_class", ENVS, ids=lambda c: c.env_id)
def test_seeds_reproducible_and_distinct(env_class: type[TFEnv]):
    env = env_class()
    reset = tf.function(env.reset, reduce_retracing=True)
    a, obs_a = reset(tf.constant(11, tf.int64), 64)
    b, obs_b = reset(tf.constant(11, tf.int64), 64)
    c, obs_c = reset(tf.constant(12, tf.int64), 64)
    np.testing.assert_array_equal(obs_a, obs_b)
    assert not np.any(np.all(obs_a.numpy() == obs_c.numpy(), axis=1))  # a new seed: new states
    for column, bounds in zip(a.physics.numpy().T, RESET_RANGES[env.env_id[3:]], strict=True):
        if bounds is not None:
            assert len(np.unique(column)) == 64  # every env its own draw
    assert len(np.unique(a.key.numpy())) == 64
    # a big seed (beyond 32 bits) works and differs from its low bits
    d, _ = env.reset(11 + 2**40, 64)
    assert not np.array_equal(d.key.numpy(), a.key.numpy())


@pytest.mark.parametrize("gym_id", GYM_IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reset_distribution_matches_gymnasium(gym_id: str, dtype: str):
    env = make_tf_env("tf/" + gym_id, dtype=dtype)
    num_envs = 20_000
    state, _ = env.reset(0, num_envs)
    # auto-resets draw from the same distribution: the states of episode 1 of every env
    fresh = env.initial_physics(
        uniform_draws(state.key, state.episode + 1, env.num_reset_draws, env.dtype)
    )
    for physics in (state.physics.numpy(), fresh.numpy()):
        for column, bounds in zip(physics.T, RESET_RANGES[gym_id], strict=True):
            if bounds is None:
                np.testing.assert_array_equal(column, 0.0)
                continue
            low, high = bounds
            width = high - low
            assert low <= column.min() < low + 0.001 * width
            assert high - 0.001 * width < column.max() <= high
            # uniform: mean and variance within ~5 standard errors
            assert abs(column.mean() - (low + high) / 2) < 5 * width / np.sqrt(12 * num_envs)
            np.testing.assert_allclose(column.var(), width**2 / 12, rtol=0.05)
    # and gymnasium's own reset stays inside the same ranges
    g = gym.make(gym_id)
    for seed in range(20):
        g.reset(seed=seed)
        for value, bounds in zip(g.unwrapped.state, RESET_RANGES[gym_id], strict=True):
            if bounds is not None:
                assert bounds[0] <= value <= bounds[1]


@pytest.mark.parametrize("gym_id", GYM_IDS)
def test_registered_with_gymnasium_spec(gym_id: str):
    env = registry.get_env_factory("tf/" + gym_id)()
    assert isinstance(env, TFEnv) and env.env_id == "tf/" + gym_id
    g = gym.make(gym_id)
    expected = EnvSpec.from_spaces(
        "tf/" + gym_id, 4, g.observation_space, g.action_space, g.spec.max_episode_steps
    )
    got = env.spec(4)
    for field in ("obs_shape", "obs_dtype", "action_type", "num_actions", "action_shape"):
        assert getattr(got, field) == getattr(expected, field), field
    assert got.max_episode_steps == expected.max_episode_steps
    np.testing.assert_array_equal(env.observation_spec.low, g.observation_space.low)
    np.testing.assert_array_equal(env.observation_spec.high, g.observation_space.high)
    if not got.discrete:
        np.testing.assert_array_equal(got.action_low, expected.action_low)
        np.testing.assert_array_equal(got.action_high, expected.action_high)


def test_tf_envs_are_refused_as_gymnasium_envs():
    with pytest.raises(UserError, match="written in TF ops and runs on the compiled path"):
        make_vector_env("tf/CartPole-v1", 2, seed=0)


def test_bad_dtype_is_refused():
    with pytest.raises(ValueError, match="float32 or float64"):
        make_tf_env("tf/CartPole-v1", dtype="int32")
