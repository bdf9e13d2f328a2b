"""The compiled PPO iteration: traced once, counts env steps, learns nothing by accident, and the
in-graph greedy evaluation plays exactly one episode per env."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401  (fills the registries)
from rl import registry
from rl.compiled import CompiledPPO
from rl.envs.tf import make_tf_env


def _ppo(seed: int = 0, **overrides) -> CompiledPPO:
    hp = registry.get_hparams("ppo_tf_tiny")()
    hp.jit_compile = True  # the set turns XLA off for the train.py smoke runs
    for key, value in overrides.items():
        setattr(hp, key, value)
    hp.freeze()
    env = make_tf_env(hp.env, max_episode_steps=hp.max_episode_steps)
    return CompiledPPO(hp, env, seed)


@pytest.fixture(scope="module")
def ppo() -> CompiledPPO:
    return _ppo()


def test_iteration_is_traced_once_and_counts_steps(ppo):
    per_iteration = ppo.steps_per_iteration
    assert per_iteration == 64  # train_every 64 over 4 envs: T = 16
    start = int(ppo.agent.env_steps.numpy())
    grad_start = int(ppo.agent.learner.gradient_steps.numpy())
    metrics = [ppo.run_iteration() for _ in range(3)]
    assert ppo.iteration.experimental_get_tracing_count() == 1
    assert int(ppo.agent.env_steps.numpy()) == start + 3 * per_iteration
    # n_epochs 2 x round(64 / 32) minibatches per iteration
    assert int(ppo.agent.learner.gradient_steps.numpy()) == grad_start + 3 * 2 * 2
    for m in metrics:
        for key in ("loss", "policy_loss", "value_loss", "entropy", "clip_fraction",
                    "approx_kl", "grad_norm", "explained_variance"):  # fmt: skip
            assert np.isfinite(m[key]), (key, m)
    # CartPole: 64 steps over 4 envs with a 50-step limit; every finished episode has
    # return == length (reward 1 per step).
    total = sum(m["episodes_done"] for m in metrics)
    assert total > 0
    assert sum(m["episode_return_sum"] for m in metrics) == sum(
        m["episode_length_sum"] for m in metrics
    )


def test_weights_change_and_env_state_advances(ppo):
    before = ppo.variables()
    ppo.run_iteration()
    after = ppo.variables()
    assert before.keys() == after.keys()
    changed = {k for k in before if not np.array_equal(before[k], after[k])}
    assert any("physics" in k for k in changed), sorted(changed)
    weights = [k for k in changed if k.startswith("agent/learner/optimizer/_trainable_variables/")]
    assert weights, sorted(changed)
    assert any("generator" in k for k in changed), sorted(changed)


def test_evaluation_plays_one_greedy_episode_per_env(ppo):
    returns, lengths = ppo.evaluate(seed=7, num_envs=5)
    assert returns.shape == (5,) and lengths.shape == (5,)
    assert np.array_equal(returns, lengths.astype(np.float64))  # CartPole: +1 per step
    assert np.all((lengths >= 1) & (lengths <= 50))  # the tiny set's time limit
    again, _ = ppo.evaluate(seed=7, num_envs=5)
    assert np.array_equal(returns, again)  # greedy + same seed: same episodes
    ppo.evaluate(seed=8, num_envs=5)  # a new seed is a tensor: no retracing
    assert ppo.evaluators[5].experimental_get_tracing_count() == 1


def test_evaluation_matches_a_python_loop(ppo):
    """The in-graph evaluation equals stepping the same TFEnv eagerly with greedy actions."""
    env = ppo.env
    state, obs = env.reset(tf.constant(3, tf.int64), 3)
    returns = np.zeros(3)
    running = np.ones(3, bool)
    while running.any():
        action = ppo.agent.act(obs, explore=False)
        state, ts = env.step(state, action)
        returns += np.where(running, ts.reward.numpy(), 0.0)
        running &= ~(ts.terminated.numpy() | ts.truncated.numpy())
        obs = ts.obs
    compiled, _ = ppo.evaluate(seed=3, num_envs=3)
    np.testing.assert_array_equal(compiled, returns)
