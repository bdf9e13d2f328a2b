#!/usr/bin/env python3
"""Env steps/s of the TF-ops CartPole driven by a policy in ONE compiled loop, vs gymnasium.

Why: the compiled path (docs/compiled.md) only pays off if acting + stepping inside one
XLA program is far faster than a Python env loop. For each N in --num_envs this builds
`tf.function(jit_compile=True)` around a `tf.while_loop` of T steps in which a 64-64 tanh MLP
with random weights picks actions for N `tf/CartPole-v1` envs (sampled from its logits with a
stateless op, or greedy with --policy greedy) and the envs step (auto-reset, time limit), then
times it: one warm-up call (compile), then the median of --repeats calls. "tf random" is the
same loop with uniform random actions and no network: the env's own cost. As the reference,
the same run times gymnasium's CartPole-v1 (gymnasium/envs/classic_control/cartpole.py) with
random actions precomputed in numpy, through
  sync     gymnasium.vector.SyncVectorEnv, the vector env `rl.envs.make_vector_env` builds
  numpy    gymnasium's numpy-vectorized `CartPoleVectorEnv` (`vectorization_mode=
           "vector_entry_point"`), the fastest pure-Python CartPole gymnasium has;
  numpy + MLP  the same, acting with the same MLP (greedy) through one `tf.function` call per
           vector step: the host round trip the compiled path removes.

    .venv/bin/python -m benchmarks.tf_env_throughput
    .venv/bin/python -m benchmarks.tf_env_throughput --num_envs 1,1024 --policy greedy
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

import rl  # noqa: E402,F401
from benchmarks import tool_records  # noqa: E402
from rl.envs.tf import TFEnv, make_tf_env  # noqa: E402

HIDDEN = 64


def make_policy(obs_size: int, num_actions: int, seed: int) -> list[tf.Tensor]:
    """Random weights of a 2-hidden-layer MLP (Glorot-scaled normal), as constants."""
    rng = np.random.default_rng(seed)
    sizes = [obs_size, HIDDEN, HIDDEN, num_actions]
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        scale = np.sqrt(2.0 / (fan_in + fan_out))
        params.append(tf.constant(rng.normal(0.0, scale, (fan_in, fan_out)), tf.float32))
        params.append(tf.zeros([fan_out]))
    return params


def build_rollout(env: TFEnv, params: list[tf.Tensor], num_envs: int, steps: int, policy: str):
    """One XLA program: reset N envs, then `steps` x (policy forward, action, env step).

    policy "random" skips the network (uniform random actions): the env's own cost.
    """
    w1, b1, w2, b2, w3, b3 = params

    @tf.function(jit_compile=True)
    def rollout(seed: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        state, obs = env.reset(seed, num_envs)

        def body(t, state, obs, reward_sum, ends):
            key = tf.stack([tf.cast(seed, tf.int32), t])  # XLA's kernels take int32 seeds
            if policy == "random":
                action = tf.random.stateless_uniform([num_envs], key, 0, 2, tf.int32)
            else:
                hidden = tf.tanh(tf.matmul(obs, w1) + b1)
                hidden = tf.tanh(tf.matmul(hidden, w2) + b2)
                logits = tf.matmul(hidden, w3) + b3
                if policy == "greedy":
                    action = tf.argmax(logits, axis=1, output_type=tf.int32)
                else:
                    action = tf.random.stateless_categorical(logits, 1, key, tf.int32)[:, 0]
            state, ts = env.step(state, action)
            done = tf.cast(tf.logical_or(ts.terminated, ts.truncated), tf.int32)
            return t + 1, state, ts.obs, reward_sum + tf.reduce_sum(ts.reward), ends + done

        init = (tf.constant(0), state, obs, tf.constant(0.0), tf.zeros([num_envs], tf.int32))
        _, _, _, reward_sum, ends = tf.while_loop(lambda t, *_: t < steps, body, init)
        return reward_sum, tf.reduce_sum(ends)

    return rollout


def time_tf(env: TFEnv, num_envs: int, steps: int, repeats: int, policy: str) -> float:
    params = make_policy(env.observation_spec.shape[0], env.action_spec.n, seed=0)
    rollout = build_rollout(env, params, num_envs, steps, policy)
    rollout(tf.constant(0, tf.int64))[0].numpy()  # warm-up: trace + XLA compile
    samples = []
    for rep in range(repeats):
        seed = tf.constant(rep + 1, tf.int64)
        start = time.perf_counter()
        rollout(seed)[0].numpy()
        samples.append(time.perf_counter() - start)
    return num_envs * steps / statistics.median(samples)


def time_gym(mode: str, num_envs: int, steps: int, repeats: int, with_policy: bool) -> float:
    """gymnasium's CartPole; with_policy: actions from the same MLP, one tf.function per step."""
    kwargs = {"autoreset_mode": AutoresetMode.SAME_STEP} if mode == "sync" else {}
    mode_name = "sync" if mode == "sync" else "vector_entry_point"
    env = gym.make_vec("CartPole-v1", num_envs, vectorization_mode=mode_name, vector_kwargs=kwargs)
    w1, b1, w2, b2, w3, b3 = make_policy(4, 2, seed=0)

    @tf.function(input_signature=[tf.TensorSpec([num_envs, 4], tf.float32)])
    def greedy(obs):
        hidden = tf.tanh(tf.matmul(obs, w1) + b1)
        hidden = tf.tanh(tf.matmul(hidden, w2) + b2)
        return tf.argmax(tf.matmul(hidden, w3) + b3, axis=1)

    random_actions = np.random.default_rng(0).integers(0, 2, (steps, num_envs))

    def run(num_steps: int) -> None:
        obs, _ = env.reset(seed=0)
        for t in range(num_steps):
            action = greedy(obs).numpy() if with_policy else random_actions[t]
            obs, *_ = env.step(action)

    run(max(2, steps // 10))  # warm-up (and the policy's trace)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        run(steps)
        samples.append(time.perf_counter() - start)
    env.close()
    return num_envs * steps / statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num_envs", default="1,64,1024,4096", help="comma-separated N values")
    parser.add_argument("--env_steps", type=int, default=2**21, help="TF: env steps per call")
    parser.add_argument("--max_loop_steps", type=int, default=20_000, help="TF: cap on T")
    parser.add_argument("--gym_env_steps", type=int, default=40_000, help="gymnasium, per timing")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--policy", choices=["sample", "greedy"], default="sample")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    args = parser.parse_args()

    env = make_tf_env("tf/CartPole-v1", dtype=args.dtype)
    print(
        f"tf/CartPole-v1 ({args.dtype}) + 64-64 MLP ({args.policy} actions), one XLA loop; "
        f"gymnasium {gym.__version__} CartPole-v1 (random actions or the MLP); "
        f"TF {tf.__version__}, {os.cpu_count()} CPUs, devices: "
        + ", ".join(d.device_type for d in tf.config.list_physical_devices())
    )
    print(f"median of {args.repeats} after a warm-up; env steps/s")
    header = (
        f"{'N':>6} {'T':>7} {'tf + MLP':>12} {'tf random':>12} {'gym sync':>10} {'gym numpy':>12}"
        f" {'numpy + MLP':>12}"
    )
    print(header)
    print("-" * len(header))
    rows = []
    for num_envs in (int(n) for n in args.num_envs.split(",")):
        steps = max(100, min(args.max_loop_steps, args.env_steps // num_envs))
        tf_sps = time_tf(env, num_envs, steps, args.repeats, args.policy)
        random_sps = time_tf(env, num_envs, steps, args.repeats, "random")
        gym_steps = max(10, args.gym_env_steps // num_envs)
        sync_sps = time_gym("sync", num_envs, gym_steps, args.repeats, with_policy=False)
        numpy_sps = time_gym("numpy", num_envs, gym_steps, args.repeats, with_policy=False)
        numpy_mlp_sps = time_gym("numpy", num_envs, gym_steps, args.repeats, with_policy=True)
        print(
            f"{num_envs:>6} {steps:>7} {tf_sps:>12,.0f} {random_sps:>12,.0f} "
            f"{sync_sps:>10,.0f} {numpy_sps:>12,.0f} {numpy_mlp_sps:>12,.0f}"
        )
        sys.stdout.flush()
        rates = (tf_sps, random_sps, sync_sps, numpy_sps, numpy_mlp_sps)
        names = ("tf_mlp", "tf_random", "gym_sync", "gym_numpy", "numpy_mlp")
        rows.append(
            {"num_envs": num_envs, "loop_steps": steps, **dict(zip(names, rates, strict=True))}
        )
    tool_records.append("tf_env_throughput", vars(args), {"env_steps_per_s": rows})


if __name__ == "__main__":
    main()
