"""Cooperative multi-agent tasks as ordinary gymnasium envs: a PettingZoo parallel env with its
agents stacked on a leading axis, and the Multi-Agent Particle Environments registered on it.

Everything else in rl works on one env per copy with one scalar reward per step, which a
cooperative task (one team reward) fits once every agent's observation and action are stacked
(rules: docs/environments.md, "Cooperative multi-agent tasks (MPE)").

MPE: Lowe et al. 2017, https://arxiv.org/abs/1706.02275, maintained as `mpe2` on PettingZoo
(Terry et al. 2021, https://arxiv.org/abs/2009.14471); imported on first use.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import gymnasium as gym
import numpy as np

from rl.errors import UserError, did_you_mean
from rl.registry import register_env


class MultiAgentEnv(gym.Env):
    """A PettingZoo parallel env (continuous actions, Box observations) as one gymnasium env
    with stacked per-agent observations and actions and the mean team reward (see above)."""

    def __init__(self, parallel_env: Any, name: str = "multi_agent") -> None:
        self._env = parallel_env
        self.agent_names: tuple[str, ...] = tuple(parallel_env.possible_agents)
        obs_spaces = [parallel_env.observation_space(a) for a in self.agent_names]
        action_spaces = [parallel_env.action_space(a) for a in self.agent_names]
        for agent, obs_space, action_space in zip(
            self.agent_names, obs_spaces, action_spaces, strict=True
        ):
            for kind, space, stackable in (
                ("observation", obs_space, "1-D Box observations"),
                ("action", action_space, "1-D Box (continuous) actions"),
            ):
                if not (isinstance(space, gym.spaces.Box) and len(space.shape) == 1):
                    raise UserError(
                        f"env {name!r}: agent {agent!r} has {kind} space {space}; only "
                        f"{stackable} can be stacked"
                    )

        self.obs_sizes = [int(s.shape[0]) for s in obs_spaces]
        self.action_sizes = [int(s.shape[0]) for s in action_spaces]
        n, obs_dim, act_dim = len(self.agent_names), max(self.obs_sizes), max(self.action_sizes)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (n, obs_dim), np.float32)
        low = np.zeros((n, act_dim), np.float32)
        high = np.zeros((n, act_dim), np.float32)
        for i, space in enumerate(action_spaces):
            low[i, : self.action_sizes[i]] = space.low
            high[i, : self.action_sizes[i]] = space.high
        self.action_space = gym.spaces.Box(low, high, dtype=np.float32)
        self.render_mode = getattr(parallel_env, "render_mode", None)
        self.metadata = {**type(self).metadata, **getattr(parallel_env, "metadata", {})}
        self._ended: dict[str, str] = {}  # agent -> "terminated" | "truncated" this episode

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        obs, _ = self._env.reset(seed=seed, options=options)
        self._ended = {}
        return self._stack(obs), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        action = np.asarray(action, np.float32)
        live = list(self._env.agents)
        if not live:
            raise RuntimeError("step() called after the episode ended; call reset() first")
        index = {agent: i for i, agent in enumerate(self.agent_names)}
        actions = {a: action[index[a], : self.action_sizes[index[a]]] for a in live}
        obs, rewards, terminations, truncations, _ = self._env.step(actions)
        agent_rewards = np.array([float(rewards.get(a, 0.0)) for a in self.agent_names], np.float32)
        for agent in live:
            if truncations.get(agent, False):
                self._ended[agent] = "truncated"
            elif terminations.get(agent, False):
                self._ended[agent] = "terminated"
        done = not self._env.agents
        truncated = done and "truncated" in self._ended.values()
        terminated = done and not truncated
        reward = float(agent_rewards.mean())
        return self._stack(obs), reward, terminated, truncated, {"agent_rewards": agent_rewards}

    def render(self) -> Any:
        return self._env.render()

    def close(self) -> None:
        self._env.close()

    def _stack(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        stacked = np.zeros(self.observation_space.shape, np.float32)
        for i, agent in enumerate(self.agent_names):
            if agent in obs:
                stacked[i, : self.obs_sizes[i]] = obs[agent]
        return stacked


# Cooperative MPE tasks: registered name -> mpe2 module. All agents share the team reward.
MPE_TASKS = {
    "mpe/simple_spread_v3": "simple_spread_v3",
    "mpe/simple_speaker_listener_v4": "simple_speaker_listener_v4",
    "mpe/simple_reference_v3": "simple_reference_v3",
}


def make_mpe(name: str, **env_kwargs: Any) -> MultiAgentEnv:
    """The cooperative MPE task `name` with continuous actions; `env_kwargs` are mpe2's
    (N, local_ratio, max_cycles, ...; render_mode for videos). Unknown keys are a UserError."""
    try:
        module = importlib.import_module(f"mpe2.{MPE_TASKS[name]}")
    except ImportError as e:
        raise UserError(
            f"env {name!r} needs mpe2 ({e}); install rl with its `mpe` extra "
            "(pip install -e '.[mpe]') or run ./setup.sh"
        ) from None
    accepted = inspect.signature(module.raw_env).parameters
    for key in env_kwargs:
        if key not in accepted or key == "continuous_actions":
            options = sorted(k for k in accepted if k != "continuous_actions")
            raise UserError(
                f"env {name!r} has no option {key!r}{did_you_mean(key, options)}; env_kwargs "
                f"may set {', '.join(options)} (actions are always continuous)"
            )
    try:
        parallel_env = module.parallel_env(continuous_actions=True, **env_kwargs)
    except (AssertionError, TypeError, ValueError) as e:
        raise UserError(f"env {name!r} with env_kwargs {env_kwargs}: {e}") from None
    return MultiAgentEnv(parallel_env, name)


def _register_mpe(name: str) -> None:
    def factory(**env_kwargs: Any) -> MultiAgentEnv:
        return make_mpe(name, **env_kwargs)

    factory.__doc__ = f"{name}: mpe2's {MPE_TASKS[name]} with stacked agents (team reward)."
    register_env(name, factory)


for _name in MPE_TASKS:
    _register_mpe(_name)
