"""The PettingZoo -> gymnasium adapter (rl/envs/multi_agent.py) against the real mpe2 envs, plus a
small PettingZoo parallel env whose agents finish at different times."""

import gymnasium as gym
import numpy as np
import pytest
from mpe2 import simple_speaker_listener_v4, simple_spread_v3
from pettingzoo import ParallelEnv

import rl  # noqa: F401
from rl.envs import make_vector_env
from rl.envs.multi_agent import MultiAgentEnv, make_mpe
from rl.errors import UserError


def test_stacked_observations_and_team_reward_match_the_pettingzoo_env():
    kwargs = {"N": 3, "local_ratio": 0.5, "max_cycles": 25}
    env = make_mpe("mpe/simple_spread_v3", **kwargs)
    reference = simple_spread_v3.parallel_env(continuous_actions=True, **kwargs)
    assert env.observation_space.shape == (3, 18) and env.action_space.shape == (3, 5)
    obs, _ = env.reset(seed=7)
    ref_obs, _ = reference.reset(seed=7)
    names = reference.possible_agents
    np.testing.assert_array_equal(obs, np.stack([ref_obs[a] for a in names]))
    rng = np.random.default_rng(0)
    for step in range(1, 26):
        action = rng.uniform(0, 1, size=(3, 5)).astype(np.float32)
        obs, reward, terminated, truncated, info = env.step(action)
        ref_obs, ref_rewards, *_ = reference.step({a: action[i] for i, a in enumerate(names)})
        np.testing.assert_array_equal(obs, np.stack([ref_obs[a] for a in names]))
        agent_rewards = [ref_rewards[a] for a in names]
        np.testing.assert_allclose(info["agent_rewards"], agent_rewards, rtol=1e-6)
        assert reward == pytest.approx(np.mean(agent_rewards))  # the team reward is the mean
        # max_cycles=25 is a time limit: the 25th step truncates, nothing terminates.
        assert not terminated and truncated == (step == 25)


def test_padding_of_heterogeneous_agents():
    # speaker: obs 3, actions 3; listener: obs 11, actions 5 -> obs [2, 11], actions [2, 5].
    env = make_mpe("mpe/simple_speaker_listener_v4")
    reference = simple_speaker_listener_v4.parallel_env(continuous_actions=True)
    assert env.agent_names == ("speaker_0", "listener_0")
    assert env.observation_space.shape == (2, 11)
    np.testing.assert_array_equal(env.action_space.high, [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    obs, _ = env.reset(seed=3)
    ref_obs, _ = reference.reset(seed=3)
    np.testing.assert_array_equal(obs[0, :3], ref_obs["speaker_0"])
    np.testing.assert_array_equal(obs[0, 3:], 0.0)
    np.testing.assert_array_equal(obs[1], ref_obs["listener_0"])
    # The speaker's padded action entries are dropped, whatever they hold.
    action = np.full((2, 5), 0.3, np.float32)
    garbage = action.copy()
    garbage[0, 3:] = 123.0
    other = make_mpe("mpe/simple_speaker_listener_v4")
    other.reset(seed=3)
    np.testing.assert_array_equal(env.step(action)[0], other.step(garbage)[0])


class StaggeredEnv(ParallelEnv):
    """Two agents: "early" terminates at step 2, "late" runs to a time limit of 3 steps (or
    terminates there too with `late_terminates`). Rewards: 1 per step for early, 3 for late."""

    metadata = {"name": "staggered"}

    def __init__(self, late_terminates: bool = False):
        self.possible_agents = ["early", "late"]
        self.late_terminates = late_terminates

    def observation_space(self, agent):
        return gym.spaces.Box(-1, 1, (1 if agent == "early" else 2,), np.float32)

    def action_space(self, agent):
        return gym.spaces.Box(-1, 1, (2,), np.float32)

    def reset(self, seed=None, options=None):
        self.agents, self.t = list(self.possible_agents), 0
        return {a: self._obs(a) for a in self.agents}, {a: {} for a in self.agents}

    def _obs(self, agent):
        size = 1 if agent == "early" else 2
        return np.full(size, self.t / 10, np.float32)

    def step(self, actions):
        assert set(actions) == set(self.agents)
        self.t += 1
        obs = {a: self._obs(a) for a in self.agents}
        rewards = {a: 1.0 if a == "early" else 3.0 for a in self.agents}
        term = {a: (a == "early" and self.t == 2) for a in self.agents}
        trunc = {a: False for a in self.agents}
        if "late" in self.agents and self.t == 3:
            (term if self.late_terminates else trunc)["late"] = True
        self.agents = [a for a in self.agents if not (term[a] or trunc[a])]
        return obs, rewards, term, trunc, {a: {} for a in obs}


@pytest.mark.parametrize("late_terminates", [False, True])
def test_agents_that_finish_early_and_the_episode_end(late_terminates):
    env = MultiAgentEnv(StaggeredEnv(late_terminates), "staggered")
    assert env.observation_space.shape == (2, 2)
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs, [[0.0, 0.0], [0.0, 0.0]])
    action = np.zeros((2, 2), np.float32)
    # Step 1: both run; team reward mean(1, 3) = 2.
    obs, reward, terminated, truncated, _ = env.step(action)
    np.testing.assert_allclose(obs, [[0.1, 0.0], [0.1, 0.1]])
    assert (reward, terminated, truncated) == (2.0, False, False)
    # Step 2: "early" terminates, but the episode goes on while "late" runs.
    obs, reward, terminated, truncated, _ = env.step(action)
    assert (reward, terminated, truncated) == (2.0, False, False)
    # Step 3: only "late" acts; the done agent's row is zeros and counts 0 in the mean: 3 / 2.
    obs, reward, terminated, truncated, info = env.step(action)
    np.testing.assert_allclose(obs, [[0.0, 0.0], [0.3, 0.3]])
    np.testing.assert_allclose(info["agent_rewards"], [0.0, 3.0])
    assert reward == 1.5
    # A time limit on any agent makes the episode truncated (bootstrap), else terminated.
    assert (terminated, truncated) == (late_terminates, not late_terminates)


def test_vector_env_spec_and_seeding():
    kwargs = {"N": 2, "max_cycles": 5}
    env, spec = make_vector_env("mpe/simple_spread_v3", 2, seed=11, env_kwargs=kwargs)
    assert spec.obs_shape == (2, 12) and spec.action_shape == (2, 5) and not spec.discrete
    np.testing.assert_array_equal(spec.action_low, 0.0)
    np.testing.assert_array_equal(spec.action_high, 1.0)
    again, _ = make_vector_env("mpe/simple_spread_v3", 2, seed=11, env_kwargs=kwargs)
    first, _ = env.reset(seed=11)
    second, _ = again.reset(seed=11)
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first[0], first[1])  # copies get different seeds
    action = np.full((2, 2, 5), 0.5, np.float32)
    for _ in range(5):
        out, out2 = env.step(action), again.step(action)
        np.testing.assert_array_equal(out[0], out2[0])
    assert out[3].all() and not out[2].any()  # truncated at max_cycles=5 in both copies


def test_bad_env_kwargs_are_user_errors():
    with pytest.raises(UserError, match=r"no option 'max_cycle'.*did you mean 'max_cycles'"):
        make_mpe("mpe/simple_spread_v3", max_cycle=10)
    with pytest.raises(UserError, match="always continuous"):
        make_mpe("mpe/simple_spread_v3", continuous_actions=False)
    with pytest.raises(UserError, match="local_ratio"):
        make_vector_env("mpe/simple_spread_v3", 1, seed=0, env_kwargs={"local_ratio": 2.0})
