"""Collecting rollouts from real gymnasium vector envs (SAME_STEP autoreset), and re-evaluating
them under the policy that acted and under a changed one."""

import math

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf
from gymnasium.vector import AutoresetMode

from rl.envs import make_vector_env
from rl.models import ActorCritic
from rl.rollout import (
    ActorCriticPolicy,
    Collector,
    bootstrap_values,
    collect_episodes,
    collect_steps,
    concatenate,
    reevaluate,
)


class Counter(gym.Env):
    """obs = [steps taken in this episode]; reward 1 per step; terminates after `terminate_at`
    steps (None: never, a TimeLimit truncates it)."""

    observation_space = gym.spaces.Box(0.0, 100.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, terminate_at=None):
        self.terminate_at = terminate_at
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0], np.float32), {}

    def step(self, action):
        self.t += 1
        terminated = self.terminate_at is not None and self.t == self.terminate_at
        return np.array([self.t], np.float32), 1.0, terminated, False, {}


def counter_envs(mode=AutoresetMode.SAME_STEP):
    """env 0 terminates after 3 steps, env 1 is truncated after 4 (TimeLimit)."""
    return gym.vector.SyncVectorEnv(
        [
            lambda: Counter(terminate_at=3),
            lambda: gym.wrappers.TimeLimit(Counter(), max_episode_steps=4),
        ],
        autoreset_mode=mode,
    )


def always_zero(obs):
    return np.zeros(len(obs), np.int64), {}


def test_collect_steps_keeps_true_final_obs_and_resets_by_hand():
    collector = Collector(counter_envs(), always_zero, seed=0)
    rollout = collector.collect_steps(6).numpy()
    # env 0: obs 0,1,2 | 0,1,2 (terminated at t=2 and t=5); env 1: obs 0,1,2,3 | 0,1 (truncated
    # at t=3, its true final obs 4 kept in final_obs; obs[4] is the reset obs 0).
    np.testing.assert_array_equal(rollout.obs[:, :, 0].T, [[0, 1, 2, 0, 1, 2], [0, 1, 2, 3, 0, 1]])
    np.testing.assert_array_equal(rollout.terminated[:, 0], [0, 0, 1, 0, 0, 1])
    np.testing.assert_array_equal(rollout.truncated[:, 1], [0, 0, 0, 1, 0, 0])
    assert not rollout.truncated[:, 0].any() and not rollout.terminated[:, 1].any()
    np.testing.assert_array_equal(rollout.final_obs[:, 1, 0], [0, 0, 0, 4, 0, 0])
    np.testing.assert_array_equal(rollout.final_obs[:, 0, 0], np.zeros(6))  # never truncated
    np.testing.assert_array_equal(rollout.last_next_obs[:, 0], [0, 2])
    assert rollout.log_prob is None and rollout.value is None  # the policy gave no info
    # gamma 1, no critic: env 0 [3, 2, 1, 3, 2, 1]; env 1 [4, 3, 2, 1, 2, 1].
    np.testing.assert_allclose(
        rollout.monte_carlo_returns(1.0).numpy().T, [[3, 2, 1, 3, 2, 1], [4, 3, 2, 1, 2, 1]]
    )
    assert collector.stats.returns == [3.0, 4.0, 3.0] and collector.stats.lengths == [3, 4, 3]
    # A second call continues the same episodes: its first obs is the first call's bootstrap.
    more = collector.collect_steps(2).numpy()
    np.testing.assert_array_equal(more.obs[0], rollout.last_next_obs)
    np.testing.assert_array_equal(more.obs[:, 1, 0], [2, 3])


def test_a_numpy_policy_acts_once_per_step_and_keeps_its_log_prob():
    """A plain numpy function runs inside the driver's compiled loop: its output types are read
    off its first call, whose result is also the first step's, so it still acts once a step."""
    seen = []

    def policy(obs):
        seen.append(obs[:, 0].copy())
        return np.ones(len(obs), np.int64), {"log_prob": np.full(len(obs), -0.5), "x": obs}

    rollout = collect_steps(counter_envs(), policy, 3, seed=0).numpy()
    np.testing.assert_array_equal(np.stack(seen), rollout.obs[:, :, 0])  # one call per step
    np.testing.assert_array_equal(rollout.action, np.ones([3, 2]))
    assert rollout.log_prob.dtype == np.float32 and rollout.value is None
    np.testing.assert_array_equal(rollout.log_prob, np.full([3, 2], -0.5))


def test_collect_episodes_plays_each_envs_quota_from_resets():
    episodes = collect_episodes(counter_envs(), always_zero, 3, seed=0)
    # Quotas: env 0 plays 2 episodes, env 1 one; interleaved by env.
    assert [e.num_steps for e in episodes] == [3, 4, 3]
    first, truncated = episodes[0].numpy(), episodes[1].numpy()
    np.testing.assert_array_equal(first.terminated[:, 0], [0, 0, 1])
    np.testing.assert_array_equal(first.obs[:, 0, 0], [0, 1, 2])
    np.testing.assert_array_equal(first.last_next_obs, [[3]])  # the true final state
    np.testing.assert_array_equal(truncated.truncated[:, 0], [0, 0, 0, 1])
    np.testing.assert_array_equal(truncated.final_obs[:, 0, 0], [0, 0, 0, 4])
    # Whole episodes join along time into one valid single-env rollout.
    joined = concatenate(episodes)
    assert joined.num_steps == 10 and joined.num_envs == 1
    np.testing.assert_allclose(
        joined.monte_carlo_returns(1.0).numpy()[:, 0], [3, 2, 1, 4, 3, 2, 1, 3, 2, 1]
    )


def test_next_step_autoreset_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="SAME_STEP"):
        Collector(counter_envs(AutoresetMode.NEXT_STEP), always_zero)
    with pytest.raises(ValueError, match="num_steps"):
        collect_steps(counter_envs(), always_zero, 0)


def cartpole_policy(seed=0):
    env, spec = make_vector_env("CartPole-v1", 3, seed=seed, max_episode_steps=20)
    model = ActorCritic(spec, "mlp", [16], "tanh", name="ac")
    model(tf.zeros([1, 4]))
    return env, model, ActorCriticPolicy(model, tf.random.Generator.from_seed(seed))


def test_reevaluate_reproduces_acting_log_probs_and_values():
    env, model, policy = cartpole_policy()
    rollout = collect_steps(env, policy, 30, seed=0)  # 20-step time limit: truncations
    assert rollout.truncated.any()
    evaluation = reevaluate(rollout, model)
    assert evaluation.log_prob.shape == (30, 3) and evaluation.params.shape == (30, 3, 2)
    # The weights that acted: the batched re-evaluation equals the per-step acting numbers.
    np.testing.assert_allclose(evaluation.log_prob, rollout.log_prob, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(evaluation.value, rollout.value, rtol=1e-5, atol=1e-6)
    # V(final_obs) only where truncated; V(last_next_obs) is the bootstrap.
    final_values, bootstrap = bootstrap_values(rollout, model)
    expected = model.value(tf.reshape(rollout.final_obs, [-1, 4])).numpy().reshape(30, 3)
    np.testing.assert_allclose(final_values, np.where(rollout.truncated, expected, 0.0), rtol=1e-6)
    np.testing.assert_allclose(bootstrap, model.value(rollout.last_next_obs), rtol=1e-6)


def test_reevaluate_under_a_changed_policy_differs_by_the_known_amount():
    env, model, policy = cartpole_policy()
    rollout = collect_steps(env, policy, 10, seed=0)
    before = reevaluate(rollout, model)
    # A zero policy head is the uniform policy: log pi = ln 1/2 for every action, entropy ln 2;
    # a value bias raised by 1 raises every V(s) by exactly 1.
    for weight in model.policy_head.weights:
        weight.assign(tf.zeros_like(weight))
    model.value_head.bias.assign_add([1.0])
    after = reevaluate(rollout, model)
    np.testing.assert_allclose(after.log_prob, np.full([10, 3], math.log(0.5)), rtol=1e-6)
    np.testing.assert_allclose(after.entropy, np.full([10, 3], math.log(2.0)), rtol=1e-6)
    np.testing.assert_allclose(after.value, before.value.numpy() + 1.0, rtol=1e-5)
    # The log importance ratio of the new policy to the behaviour one.
    log_ratio = (after.log_prob - rollout.log_prob).numpy()
    np.testing.assert_allclose(log_ratio, math.log(0.5) - rollout.log_prob, rtol=1e-5, atol=1e-6)
