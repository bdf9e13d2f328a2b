"""Collecting rollouts from a gymnasium vector env: a fixed number of steps, or whole episodes.

For notebooks and new algorithms that are not (yet) an `Agent` driven by the in-process engine: a
`Collector` steps the env with a policy and returns `Rollout`s. The engines' own collect loop is
`rl.driver.Driver` (one compiled call per iteration, feeding `Agent.observe`); this one is a plain
Python loop with one compiled policy call per vector step, simpler to read and to step through.

Autoreset: gymnasium's SAME_STEP mode is required (what `rl.envs.make_vector_env` builds). The
step that ends an episode then returns the next episode's first observation, and the true last
observation in info["final_obs"]; it is kept as `final_obs` where the episode was truncated (the
state a critic bootstraps from). A terminal state is never bootstrapped, so its observation is
not needed. NEXT_STEP mode would insert a no-op reset step after every episode end, which has no
place in a [T, N] rollout, so it is refused with a message saying how to build the env.

A policy is an `Agent` (its `act_with_info`), an `rl.rollout.ActorCriticPolicy`, anything else
with a TF `act_with_info(obs) -> (action, info)` method, or a plain callable `obs -> (action,
info)` on numpy arrays. `info` entries named "log_prob" and "value" (the behaviour's
log mu(a|s) and V(s)) become the rollout's fields of those names. A `recurrent` agent also gets
the `episode_start` flags it resets its carried state with. The agent's counters are not
touched: stepping an agent's env_steps is the engine's business.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import tensorflow as tf
from gymnasium.vector import AutoresetMode

from rl.driver import EpisodeStats, true_next_obs
from rl.rollout.rollout import Rollout

# (obs, episode_start) -> (action, info); episode_start matters to recurrent agents only.
Policy = Callable[[np.ndarray, np.ndarray], tuple[Any, dict[str, Any]]]


def as_policy(policy: Any, observation_space: gym.Space) -> Policy:
    """A numpy-in, numpy-out policy `(obs, episode_start) -> (action, info)` from an object with
    `act_with_info` (compiled once with a fixed input signature) or a callable `obs -> (action,
    info)`."""
    act_with_info = getattr(policy, "act_with_info", None)
    if act_with_info is None:
        if not callable(policy):
            raise TypeError(f"policy must have act_with_info or be callable, got {policy!r}")
        return lambda obs, episode_start: policy(obs)
    obs_spec = tf.TensorSpec([None, *observation_space.shape], observation_space.dtype)
    recurrent = getattr(policy, "recurrent", False)
    start_spec = [tf.TensorSpec([None], tf.bool)] if recurrent else []
    compiled = tf.function(act_with_info, input_signature=[obs_spec, *start_spec])

    def call(obs: np.ndarray, episode_start: np.ndarray) -> tuple[np.ndarray, dict]:
        action, info = compiled(obs, episode_start) if recurrent else compiled(obs)
        return action.numpy(), {key: value.numpy() for key, value in info.items()}

    return call


class Collector:
    """Steps `env` with `policy`; consecutive `collect_steps` calls continue the same episodes."""

    def __init__(self, env: gym.vector.VectorEnv, policy: Any, seed: int | None = None) -> None:
        mode = env.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                f"Collector needs a vector env with AutoresetMode.SAME_STEP, got {mode}; build it "
                "with rl.envs.make_vector_env or gym.make_vec(..., vector_kwargs="
                "{'autoreset_mode': gym.vector.AutoresetMode.SAME_STEP})"
            )
        self.env = env
        self.num_envs = env.num_envs
        self.policy = as_policy(policy, env.single_observation_space)
        self.stats = EpisodeStats(self.num_envs)  # returns and lengths of finished episodes
        self._seed = seed
        self._obs: np.ndarray | None = None
        self._episode_start = np.ones(self.num_envs, bool)

    def reset(self, seed: int | None = None) -> None:
        """Starts fresh episodes in every env."""
        self._obs, _ = self.env.reset(seed=seed)
        self._episode_start = np.ones(self.num_envs, bool)
        self.stats.restart()

    def collect_steps(self, num_steps: int) -> Rollout:
        """The next `num_steps` vector steps of every env, as a [num_steps, N] rollout."""
        if num_steps < 1:
            raise ValueError(f"collect_steps: num_steps must be >= 1, got {num_steps}")
        if self._obs is None:
            self.reset(self._seed)
        steps = [self._step() for _ in range(num_steps)]
        fields = {key: np.stack([s[key] for s in steps]) for key in steps[0]}
        return Rollout.from_batch({**fields, "last_next_obs": self._obs.copy()})

    def collect_episodes(self, num_episodes: int) -> list[Rollout]:
        """`num_episodes` complete episodes, each a [T_i, 1] rollout ending in a termination or
        a truncation, from fresh resets. Env i plays the first num_episodes // N episodes (one
        more for i < num_episodes % N) that start in it, never "the first to finish": that would
        favour short episodes. `concatenate(episodes)` joins them into one valid rollout."""
        if num_episodes < 1:
            raise ValueError(f"collect_episodes: num_episodes must be >= 1, got {num_episodes}")
        quota = [num_episodes // self.num_envs + (i < num_episodes % self.num_envs)
                 for i in range(self.num_envs)]  # fmt: skip
        self.reset(self._seed if self._obs is None else None)
        running: list[list[dict[str, np.ndarray]]] = [[] for _ in range(self.num_envs)]
        done: list[list[Rollout]] = [[] for _ in range(self.num_envs)]
        while any(len(d) < q for d, q in zip(done, quota, strict=True)):
            step = self._step()
            for i in range(self.num_envs):
                if len(done[i]) == quota[i]:
                    continue
                running[i].append({key: value[i : i + 1] for key, value in step.items()})
                if step["terminated"][i] or step["truncated"][i]:
                    done[i].append(_episode(running[i], step["next_obs"][i]))
                    running[i] = []
        # Interleaved by env (episode j of every env, then j + 1), in a deterministic order.
        return [done[i][j] for j in range(max(quota)) for i in range(self.num_envs)
                if j < len(done[i])]  # fmt: skip

    def _step(self) -> dict[str, np.ndarray]:
        action, info = self.policy(self._obs, self._episode_start)
        action = np.asarray(action)
        next_obs, reward, terminated, truncated, env_info = self.env.step(action)
        terminated = np.asarray(terminated, bool)
        truncated = np.asarray(truncated, bool) & ~terminated
        real_next = true_next_obs(next_obs, env_info)
        mask = truncated.reshape(truncated.shape + (1,) * (real_next.ndim - 1))
        step = {
            "obs": self._obs,
            "action": action,
            "reward": np.asarray(reward, np.float32),
            "terminated": terminated,
            "truncated": truncated,
            "final_obs": np.where(mask, real_next, np.zeros_like(real_next)),
            "next_obs": real_next,
        }
        for key in ("log_prob", "value"):
            if key in info:
                step[key] = np.asarray(info[key], np.float32)
        self.stats.add_step(step["reward"], terminated | truncated)
        self._obs = next_obs
        self._episode_start = terminated | truncated
        return step


def _episode(steps: list[dict[str, np.ndarray]], last_obs: np.ndarray) -> Rollout:
    """One env's finished episode as a [T, 1] rollout (`last_obs`: its true final state)."""
    fields = {key: np.concatenate([s[key] for s in steps])[:, None] for key in steps[0]}
    return Rollout.from_batch({**fields, "last_next_obs": last_obs[None]})


def collect_steps(
    env: gym.vector.VectorEnv, policy: Any, num_steps: int, seed: int | None = None
) -> Rollout:
    """One-shot `Collector(env, policy, seed).collect_steps(num_steps)` from fresh resets."""
    return Collector(env, policy, seed).collect_steps(num_steps)


def collect_episodes(
    env: gym.vector.VectorEnv, policy: Any, num_episodes: int, seed: int | None = None
) -> list[Rollout]:
    """One-shot `Collector(env, policy, seed).collect_episodes(num_episodes)`."""
    return Collector(env, policy, seed).collect_episodes(num_episodes)
