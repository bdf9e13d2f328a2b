"""Collecting rollouts from a gymnasium vector env: a fixed number of steps, or whole episodes.

For notebooks and algorithms that are not an `Agent`: a `Collector` runs the engines' own
`Driver` with a recorder in the agent's place (docs/rollout_api.md, "Collecting"). The agent's
counters are not touched: stepping env_steps is the engine's business.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import tensorflow as tf
from gymnasium.vector import AutoresetMode

from rl.envs.spec import EnvSpec
from rl.rollout.driver import Driver
from rl.rollout.episode_stats import EpisodeStats
from rl.rollout.rollout import Rollout

# The `act_with_info` extras a rollout keeps.
POLICY_FIELDS = ("log_prob", "value")


class StepRecorder:
    """Stands in for an agent in the `Driver`: acts with the collector's policy and keeps every
    step in the `Rollout` layout (`steps`), touching no agent's counters."""

    def __init__(self, policy: Any) -> None:
        self.steps: list[dict[str, np.ndarray]] = []
        self.env_steps = tf.Variable(0, dtype=tf.int64, trainable=False)  # the driver's count
        self.recurrent = bool(getattr(policy, "recurrent", False))
        self._numpy_policy: Callable[[np.ndarray], tuple[Any, dict]] | None = None
        self._first: tuple[np.ndarray, list[np.ndarray]] | None = None  # (obs, outputs)
        self._out_dtypes: list[tf.DType] = []
        self._info_keys: list[str] = []
        if hasattr(policy, "act_with_info"):
            self._act_with_info = policy.act_with_info
        elif callable(policy):
            self._numpy_policy = policy
        else:
            raise TypeError(f"policy must have act_with_info or be callable, got {policy!r}")

    def prepare(self, obs: np.ndarray) -> None:
        """Before the first step: a numpy policy's output types, read off its call on the first
        observations (`act_with_info` then returns that call's result for them)."""
        if self._numpy_policy is None or self._out_dtypes:
            return
        action, info = self._numpy_policy(obs)
        self._info_keys = [key for key in POLICY_FIELDS if key in info]
        outputs = [np.asarray(action), *(np.asarray(info[k], np.float32) for k in self._info_keys)]
        self._first = (obs, outputs)
        self._out_dtypes = [tf.as_dtype(x.dtype) for x in outputs]

    def act_with_info(self, obs: tf.Tensor, *episode_start: tf.Tensor) -> tuple[tf.Tensor, dict]:
        if self._numpy_policy is None:
            return self._act_with_info(obs, *episode_start)
        action, *info = tf.numpy_function(self._call_numpy_policy, [obs], self._out_dtypes)
        return action, dict(zip(self._info_keys, info, strict=True))

    def _call_numpy_policy(self, obs: np.ndarray) -> list[np.ndarray]:
        first, self._first = self._first, None
        if first is not None and np.array_equal(first[0], obs):
            return first[1]
        action, info = self._numpy_policy(obs)
        dtypes = [d.as_numpy_dtype for d in self._out_dtypes]
        values = [action, *(info[k] for k in self._info_keys)]
        return [np.asarray(x, dtype) for x, dtype in zip(values, dtypes, strict=True)]

    def observe(self, transition: dict[str, Any]) -> None:
        terminated = np.asarray(transition["terminated"], bool)
        truncated = np.asarray(transition["truncated"], bool) & ~terminated
        real_next = transition["next_obs"]
        mask = truncated.reshape(truncated.shape + (1,) * (real_next.ndim - 1))
        step = {
            "obs": transition["obs"],
            "action": np.asarray(transition["action"]),
            "reward": transition["reward"],
            "terminated": terminated,
            "truncated": truncated,
            "final_obs": np.where(mask, real_next, np.zeros_like(real_next)),
            "next_obs": real_next,
        }
        for key in POLICY_FIELDS:
            if key in transition:
                step[key] = np.asarray(transition[key], np.float32)
        self.steps.append(step)


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
        self._recorder = StepRecorder(policy)
        spec = EnvSpec.from_spaces(
            "collector", self.num_envs, env.single_observation_space, env.single_action_space, None
        )
        self._driver = Driver(env, spec, self._recorder)
        self._seed = seed

    @property
    def stats(self) -> EpisodeStats:
        """Returns and lengths of finished episodes (the env's own rewards)."""
        return self._driver.stats

    def reset(self, seed: int | None = None) -> None:
        """Starts fresh episodes in every env."""
        self._driver.reset(seed)
        self._recorder.prepare(self._driver.obs)

    def collect_steps(self, num_steps: int) -> Rollout:
        """The next `num_steps` vector steps of every env, as a [num_steps, N] rollout."""
        if num_steps < 1:
            raise ValueError(f"collect_steps: num_steps must be >= 1, got {num_steps}")
        if self._driver.obs is None:
            self.reset(self._seed)
        self._driver.collect(num_steps)
        steps, self._recorder.steps = self._recorder.steps, []
        fields = {key: np.stack([s[key] for s in steps]) for key in steps[0]}
        return Rollout.from_batch({**fields, "last_next_obs": self._driver.obs.copy()})

    def collect_episodes(self, num_episodes: int) -> list[Rollout]:
        """`num_episodes` complete [T_i, 1] episodes from fresh resets. Env i plays the first
        episodes that start in it (an equal share), never "the first to finish": that would favour
        short episodes."""
        if num_episodes < 1:
            raise ValueError(f"collect_episodes: num_episodes must be >= 1, got {num_episodes}")
        quota = [num_episodes // self.num_envs + (i < num_episodes % self.num_envs)
                 for i in range(self.num_envs)]  # fmt: skip
        self.reset(self._seed if self._driver.obs is None else None)
        running: list[list[dict[str, np.ndarray]]] = [[] for _ in range(self.num_envs)]
        done: list[list[Rollout]] = [[] for _ in range(self.num_envs)]
        while any(len(d) < q for d, q in zip(done, quota, strict=True)):
            self._driver.collect(1)
            step = self._recorder.steps.pop()
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
