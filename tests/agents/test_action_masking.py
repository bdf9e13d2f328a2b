"""Action masking (docs/masking.md): no agent that masks ever picks an illegal action, and DQN's
targets maximize over the next state's legal actions only."""

import functools

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.agents.action_functions.epsilon_greedy import epsilon_greedy
from rl.envs import make_vector_env

STEPS = 20  # LegalMoves-v0 steps checked per agent, each on every env copy


# PPO on LegalMoves-v0 with the mask in info (ppo_tiny's switches); DQN's set has it as a key.
PPO_MASK_IN_INFO = "env=LegalMoves-v0,env_kwargs={'mask_in_info': True}"


@functools.cache
def make_agent(hparams_set: str, overrides: str = ""):
    """A fresh agent of the set, its env and spec; built once per module (tests only read)."""
    hp = registry.get_hparams(hparams_set)()
    hp.jit_compile = False  # seconds of XLA compile per test
    hp.override(overrides)
    hp.freeze()
    env, spec = make_vector_env(hp.env, hp.num_envs, seed=0, env_kwargs=hp.env_kwargs)
    return registry.get_agent(hp.agent)(spec, hp, seed=0), env, spec


def legal_mask(obs: np.ndarray, spec) -> np.ndarray:
    """[B, A] bool: the mask packed in a batch of LegalMoves-v0 observations."""
    part = spec.obs_layout.action_mask
    return obs[:, part.offset : part.offset + part.size] > 0.5


def test_epsilon_greedy_random_actions_are_uniform_over_the_legal_ones():
    # epsilon 1: every row draws its random action. Row 0 allows {1, 3}, row 1 only {2}; the
    # Q-values (masked already, as DQN passes them) would make 0 the greedy choice of both.
    rows = 4000
    legal = tf.constant([[False, True, False, True], [False, False, True, False]] * (rows // 2))
    q_values = tf.where(legal, 0.0, -1e9)
    actions = epsilon_greedy(q_values, tf.random.Generator.from_seed(0), 1.0, legal=legal)
    actions = actions.numpy().reshape(-1, 2)
    assert set(actions[:, 1]) == {2}
    counts = np.bincount(actions[:, 0], minlength=4)
    assert counts[0] == counts[2] == 0
    assert abs(counts[1] / counts.sum() - 0.5) < 0.05  # 2000 draws: 4.5 standard deviations


@pytest.mark.parametrize(
    ("hparams_set", "overrides"), [("dqn_legal_moves_tiny", ""), ("ppo_tiny", PPO_MASK_IN_INFO)]
)
def test_acting_and_evaluation_never_pick_an_illegal_action(hparams_set, overrides):
    # dqn: the mask as a Dict key; ppo: the mask in info. Untrained networks: without the mask
    # their argmax would be illegal about half the time. Every step is checked for the greedy
    # policy, the training policy (DQN's epsilon is 1 before learning starts) and, for PPO, the
    # sampled evaluation policy; the env then steps with the training actions, so an illegal
    # one would also end an episode with reward -1.
    agent, env, spec = make_agent(hparams_set, overrides)
    obs, _ = env.reset(seed=0)
    state = tf.zeros([spec.num_envs, agent.policy_state_size])
    explore_fn = tf.function(lambda obs: agent.act(obs, explore=True))
    sample_fn = tf.function(agent.sampled_policy_step)
    for step in range(STEPS):
        legal = legal_mask(obs, spec)
        rows = np.arange(spec.num_envs)
        greedy = agent.greedy_actions(obs)
        assert legal[rows, greedy].all(), f"greedy action illegal at step {step}"
        explore = explore_fn(tf.constant(obs)).numpy()
        assert legal[rows, explore].all(), f"training action illegal at step {step}"
        if agent.stochastic_policy:
            sampled, state = sample_fn(obs, state, tf.constant(step, tf.int64))
            assert legal[rows, sampled.numpy()].all(), f"sampled action illegal at step {step}"
        obs, reward, *_ = env.step(explore)
        assert (reward >= 0).all(), "an illegal move was played"


def test_dqn_targets_maximize_over_the_legal_next_actions():
    # Ape-X's public |TD error| of fresh transitions under the current weights, against the same
    # arithmetic by hand: Q(s, a) - (r + discount * Q_target(s', argmax over LEGAL a' of
    # Q_online(s', a'))) with the masks of the sampled next observations.
    agent, env, spec = make_agent("dqn_legal_moves_tiny")  # double_q, as DQN's default
    assert agent.hparams.double_q
    rng = np.random.default_rng(0)
    batch_size = 64
    obs = np.stack([env.reset(seed=i)[0][0] for i in range(batch_size)])
    next_obs = np.roll(obs, 1, axis=0)
    batch = {
        "obs": obs,
        "action": rng.integers(0, spec.num_actions, batch_size),
        "reward": rng.random(batch_size).astype(np.float32),
        "next_obs": next_obs,
        "discount": np.full(batch_size, 0.9, np.float32),
    }
    q = agent.q_network(obs).numpy()
    next_online = agent.q_network(next_obs).numpy()
    next_target = agent.target_network(next_obs).numpy()
    legal = legal_mask(next_obs, spec)
    best_legal = np.where(legal, next_online, -np.inf).argmax(-1)
    target = batch["reward"] + 0.9 * next_target[np.arange(batch_size), best_legal]
    expected = np.abs(q[np.arange(batch_size), batch["action"]] - target)
    np.testing.assert_allclose(agent.initial_priorities(batch), expected, rtol=1e-4, atol=1e-5)
    # The check can fail: for some rows the unmasked argmax is an illegal action.
    assert (next_online.argmax(-1) != best_legal).any()
