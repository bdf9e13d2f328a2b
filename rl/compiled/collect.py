"""In-graph collection and greedy evaluation over TF-ops envs, for one seed or many at once: plain
TF code over S * N rows (seed-major) for one `tf.function(jit_compile=True)`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import tensorflow as tf

from rl.compiled.env_variables import EnvVariables
from rl.envs.spec import EnvSpec
from rl.envs.tf import EnvState, TFEnv

Act = Callable[[tf.Tensor], tf.Tensor]


class CollectedSteps(NamedTuple):
    """What `collect` returns: the envs' next state, the time-major [T, S * N, ...] transitions,
    and per-seed [S] sums over the episodes that ended."""

    state: EnvState
    transitions: dict[str, tf.Tensor]  # obs, action, reward, terminated, truncated, final_obs
    episodes_done: tf.Tensor  # [S] episodes that ended during the rollout
    episode_return_sum: tf.Tensor  # [S] sum of their returns
    episode_length_sum: tf.Tensor  # [S] sum of their lengths


def collect(
    env: TFEnv,
    spec: EnvSpec,
    env_vars: EnvVariables,
    act: Act,
    num_steps: int,
    num_seeds: int = 1,
    after_step: Callable[[], None] | None = None,
) -> CollectedSteps:
    """Steps the S * N envs of `env_vars` `num_steps` times acting with `act`, and writes their
    next state and running episode stats back; `after_step` runs once per step (e.g. the agents'
    env-step counters, which exploration schedules read)."""
    state = env_vars.read()
    rows = int(state.elapsed.shape[0])

    def per_seed(x: tf.Tensor) -> tf.Tensor:
        return tf.reduce_sum(tf.reshape(x, [num_seeds, rows // num_seeds]), axis=1)

    def step(carry, _):
        state, ep_return, ep_length, done_count, done_return, done_length = carry
        obs = env.observe(state)
        action = act(obs)
        state, ts = env.step(state, action)
        if after_step is not None:
            after_step()
        ep_return = ep_return + ts.reward
        ep_length = ep_length + 1
        done = tf.logical_or(ts.terminated, ts.truncated)
        done_f = tf.cast(done, tf.float32)
        done_count += per_seed(done_f)
        done_return += per_seed(ep_return * done_f)
        done_length += per_seed(tf.cast(ep_length, tf.float32) * done_f)
        ep_return = tf.where(done, 0.0, ep_return)
        ep_length = tf.where(done, 0, ep_length)
        carry = (state, ep_return, ep_length, done_count, done_return, done_length)
        return carry, (obs, action, ts.reward, ts.terminated, ts.truncated, ts.final_obs)

    zeros = tf.zeros([num_seeds])
    episode_stats = (env_vars.episode_return.read_value(), env_vars.episode_length.read_value())
    carry = (state, *episode_stats, zeros, zeros, zeros)
    action_dtype = tf.int64 if spec.discrete else tf.float32
    obs_shape, action_shape = list(spec.obs_shape), list(spec.action_shape)
    out_init = (
        tf.zeros([rows, *obs_shape]),
        tf.zeros([rows, *action_shape], action_dtype),
        tf.zeros([rows]),
        tf.zeros([rows], tf.bool),
        tf.zeros([rows], tf.bool),
        tf.zeros([rows, *obs_shape]),
    )
    carries, outs = tf.scan(
        lambda acc, t: step(acc[0], t), tf.range(num_steps), initializer=(carry, out_init)
    )
    state, ep_return, ep_length, *sums = tf.nest.map_structure(lambda x: x[-1], carries)
    env_vars.write(state)
    env_vars.episode_return.assign(ep_return)
    env_vars.episode_length.assign(ep_length)
    names = ("obs", "action", "reward", "terminated", "truncated", "final_obs")
    return CollectedSteps(state, dict(zip(names, outs, strict=True)), *sums)


def greedy_episodes(
    env: TFEnv, state: EnvState, obs: tf.Tensor, act: Act
) -> tuple[tf.Tensor, tf.Tensor]:
    """(returns, lengths) [rows] of exactly one episode per env row, from a fresh reset."""
    rows = int(state.elapsed.shape[0])
    returns = tf.zeros([rows])
    lengths = tf.zeros([rows], tf.int32)
    running = tf.ones([rows], tf.bool)

    def body(state, obs, returns, lengths, running):
        state, ts = env.step(state, act(obs))
        returns += tf.where(running, ts.reward, 0.0)
        lengths += tf.cast(running, tf.int32)
        running = tf.logical_and(running, tf.logical_not(ts.terminated | ts.truncated))
        return state, ts.obs, returns, lengths, running

    _, _, returns, lengths, _ = tf.while_loop(
        lambda *loop_vars: tf.reduce_any(loop_vars[-1]),
        body,
        (state, obs, returns, lengths, running),
        maximum_iterations=env.max_episode_steps,
    )
    return returns, lengths
