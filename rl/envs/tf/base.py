"""Environments written in TF ops: batched, auto-resetting, pure functions of state.

A Python env costs a host round trip per step (~1-4k steps/s), so on the compiled path
(docs/architecture.md, "Speed rules") the env is TF ops and a whole rollout-and-update iteration
can be one XLA program. `reset(seed, num_envs) -> (state, obs)` and `step(state, action) ->
(state, TimeStep)` are pure: `EnvState` holds everything, the random-number state included.

Semantics are gymnasium's vector API with `AutoresetMode.SAME_STEP` (as `rl.envs.factory`) and
its `TimeLimit`: `terminated` and `truncated` (`elapsed >= max_episode_steps`) can both be true;
the step that ends an episode returns the reset observation in `obs` and the true last one in
`final_obs` (elsewhere `final_obs == obs`, so `final_obs` is always the one to bootstrap from).

Randomness: the initial state of episode `c` of env `e` is drawn from `hash(key_e, c, draw)`, a
counter-based generator in uint32 ops (Chris Wellons' "lowbias32" mixer,
https://nullprogram.com/blog/2018/07/31/), since TF's stateless random ops take one seed per
call, not one per row; it is branchless and works under XLA. Draws are uniform in [0, 1) with 24
random bits (float32) or 53 (float64), mapped as numpy's `Generator.uniform` does.

Numerics: `dtype=tf.float32` (default) is the fast path (and what TPUs run); `dtype=tf.float64`
reproduces gymnasium's float64 trajectories to ~1e-12 (tolerances: each env's docstring and
tests/envs/tf/test_dynamics.py). Observations and rewards are always float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import gymnasium as gym
import numpy as np
import tensorflow as tf

from rl.envs.spec import EnvSpec


class EnvState(NamedTuple):
    """Everything a batch of `N` envs needs to continue; all tensors have leading dim N."""

    physics: tf.Tensor  # [N, P]: gymnasium's `env.unwrapped.state` per env, in the env's dtype
    elapsed: tf.Tensor  # [N] int32: steps taken in the current episode (for the time limit)
    key: tf.Tensor  # [N] uint32: per-env RNG key, fixed at reset(seed)
    episode: tf.Tensor  # [N] uint32: episodes started by this env; the RNG counter


class TimeStep(NamedTuple):
    """What one batched step returns besides the next state; all float32/bool, leading dim N."""

    obs: tf.Tensor  # [N, *obs_shape] float32: observation to act on (reset obs after an end)
    reward: tf.Tensor  # [N] float32
    terminated: tf.Tensor  # [N] bool: the MDP reached a terminal state
    truncated: tf.Tensor  # [N] bool: the time limit cut the episode (bootstrap through it)
    final_obs: tf.Tensor  # [N, *obs_shape] float32: last obs of the step's own episode


@dataclass(frozen=True)
class DiscreteSpec:
    """Actions are integers in [0, n); `step` takes them as any integer dtype, shape [N]."""

    n: int
    dtype: tf.DType = tf.int64


@dataclass(frozen=True)
class BoxSpec:
    """A float box; `step` takes actions of shape [N, *shape]."""

    shape: tuple[int, ...]
    low: np.ndarray
    high: np.ndarray
    dtype: tf.DType = tf.float32


# lowbias32 constants (Wellons) and the golden-ratio increment used to separate streams.
_M1, _M2, _GOLDEN = 0x7FEB352D, 0x846CA68B, 0x9E3779B9


def _mix32(x: tf.Tensor) -> tf.Tensor:
    """A bijective uint32 -> uint32 hash with good avalanche (lowbias32)."""
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, tf.constant(16, tf.uint32)))
    x = x * tf.constant(_M1, tf.uint32)
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, tf.constant(15, tf.uint32)))
    x = x * tf.constant(_M2, tf.uint32)
    return tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, tf.constant(16, tf.uint32)))


def env_keys(seed: tf.Tensor | int, num_envs: int) -> tf.Tensor:
    """Per-env uint32 RNG keys: distinct per env index, a pure function of (seed, index)."""
    seed = tf.cast(seed, tf.int64)
    lo = tf.cast(tf.bitwise.bitwise_and(seed, 0xFFFFFFFF), tf.uint32)
    hi = tf.cast(tf.bitwise.bitwise_and(tf.bitwise.right_shift(seed, 32), 0xFFFFFFFF), tf.uint32)
    base = _mix32(tf.bitwise.bitwise_xor(_mix32(lo), hi) + tf.constant(_GOLDEN, tf.uint32))
    index = tf.cast(tf.range(num_envs), tf.uint32)
    return _mix32(base + index * tf.constant(_GOLDEN, tf.uint32))


def uniform_draws(key: tf.Tensor, episode: tf.Tensor, count: int, dtype: tf.DType) -> tf.Tensor:
    """[N, count] uniforms in [0, 1) for episode `episode` of each env; stateless."""
    stream = _mix32(tf.bitwise.bitwise_xor(key, _mix32(episode + tf.constant(1, tf.uint32))))
    words = 2 * count if dtype == tf.float64 else count  # float64 takes 53 bits from 2 words
    draw = tf.cast(tf.range(1, words + 1), tf.uint32) * tf.constant(_GOLDEN, tf.uint32)
    bits = _mix32(stream[:, None] + draw[None, :])  # [N, words]
    hi_word = bits[:, :count]
    if dtype == tf.float64:
        lo_word = bits[:, count:]
        hi27 = tf.cast(tf.bitwise.right_shift(hi_word, tf.constant(5, tf.uint32)), tf.float64)
        lo26 = tf.cast(tf.bitwise.right_shift(lo_word, tf.constant(6, tf.uint32)), tf.float64)
        return (hi27 * 67108864.0 + lo26) * (1.0 / 9007199254740992.0)  # numpy's 53-bit recipe
    top24 = tf.bitwise.right_shift(hi_word, tf.constant(8, tf.uint32))
    return tf.cast(top24, dtype) * (1.0 / 16777216.0)


class TFEnv:
    """Base of the TF-ops envs: reset, step, time limit and auto-reset around three hooks a subclass
    fills: `initial_physics` (uniforms -> state: gymnasium's `reset`), `dynamics` (state, action
    -> next state, reward, terminated: its `step` without the time limit) and `_observe`."""

    env_id: ClassVar[str]
    observation_spec: ClassVar[BoxSpec]
    action_spec: ClassVar[DiscreteSpec | BoxSpec]
    num_reset_draws: ClassVar[int]  # uniforms `initial_physics` consumes per env
    default_max_episode_steps: ClassVar[int]  # gymnasium's registered time limit

    def __init__(self, max_episode_steps: int | None = None, dtype: tf.DType = tf.float32):
        dtype = tf.as_dtype(dtype)
        if dtype not in (tf.float32, tf.float64):
            raise ValueError(f"{self.env_id}: dtype must be float32 or float64, got {dtype.name}")
        if max_episode_steps is None:
            max_episode_steps = self.default_max_episode_steps
        if max_episode_steps < 1:
            raise ValueError(f"{self.env_id}: max_episode_steps must be >= 1")
        self.max_episode_steps = int(max_episode_steps)
        self.dtype = dtype

    # ----------------------------------------------------------------- public, pure functions
    def reset(self, seed: tf.Tensor | int, num_envs: int) -> tuple[EnvState, tf.Tensor]:
        """Starts `num_envs` episodes: (state, first observation [N, ...]). `seed` may be a tensor
        (a new seed does not retrace); `num_envs` is a Python int, since it fixes the shapes."""
        key = env_keys(seed, num_envs)
        episode = tf.zeros([num_envs], tf.uint32)
        physics = self.initial_physics(
            uniform_draws(key, episode, self.num_reset_draws, self.dtype)
        )
        state = EnvState(physics, tf.zeros([num_envs], tf.int32), key, episode)
        return state, self._observe(physics)

    def step(self, state: EnvState, action: tf.Tensor) -> tuple[EnvState, TimeStep]:
        """One step of every env; envs whose episode ended are reset within the same step."""
        physics, reward, terminated = self.dynamics(state.physics, action)
        elapsed = state.elapsed + 1
        truncated = elapsed >= self.max_episode_steps
        final_obs = self._observe(physics)
        done = tf.logical_or(terminated, truncated)

        episode = state.episode + tf.cast(done, tf.uint32)
        fresh = self.initial_physics(
            uniform_draws(state.key, episode, self.num_reset_draws, self.dtype)
        )
        physics = tf.where(done[:, None], fresh, physics)
        obs = tf.where(done[:, None], self._observe(fresh), final_obs)
        elapsed = tf.where(done, tf.zeros_like(elapsed), elapsed)
        next_state = EnvState(physics, elapsed, state.key, episode)
        return next_state, TimeStep(
            obs, tf.cast(reward, tf.float32), terminated, truncated, final_obs
        )

    def observe(self, state: EnvState) -> tf.Tensor:
        """The float32 observation of `state` (what reset/step returned for it)."""
        return self._observe(state.physics)

    def with_physics(self, state: EnvState, physics: tf.Tensor | np.ndarray) -> EnvState:
        """`state` with its physics replaced (e.g. by gymnasium's `env.unwrapped.state` rows)."""
        return state._replace(physics=tf.convert_to_tensor(physics, self.dtype))

    def spec(self, num_envs: int = 1) -> EnvSpec:
        """The EnvSpec a gymnasium env with these (float32) spaces gets."""
        act = self.action_spec
        if isinstance(act, DiscreteSpec):
            action_space = gym.spaces.Discrete(act.n)
        else:
            low, high = np.asarray(act.low, np.float32), np.asarray(act.high, np.float32)
            action_space = gym.spaces.Box(low, high, act.shape, np.float32)
        obs_space = gym.spaces.Box(-np.inf, np.inf, self.observation_spec.shape, np.float32)
        return EnvSpec.from_spaces(
            self.env_id, num_envs, obs_space, action_space, self.max_episode_steps
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.env_id!r}, max_episode_steps={self.max_episode_steps}, "
            f"dtype={self.dtype.name})"
        )

    # ----------------------------------------------------------------- hooks for subclasses
    def initial_physics(self, uniform: tf.Tensor) -> tf.Tensor:
        """[N, num_reset_draws] uniforms in [0, 1) -> [N, P] initial physics."""
        raise NotImplementedError

    def dynamics(
        self, physics: tf.Tensor, action: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """-> (next physics [N, k], reward [N] (any float dtype), terminated [N] bool)."""
        raise NotImplementedError

    def _observe(self, physics: tf.Tensor) -> tf.Tensor:
        """[N, P] physics -> [N, *obs_shape] float32."""
        raise NotImplementedError


def uniform_between(uniform: tf.Tensor, low: float, high: float) -> tf.Tensor:
    """numpy's `Generator.uniform(low, high)` given u in [0, 1): `low + (high - low) * u`."""
    return low + (high - low) * uniform
