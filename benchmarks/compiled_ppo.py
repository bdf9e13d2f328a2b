#!/usr/bin/env python3
"""The compiled PPO path: iteration throughput and FLOP/s against this CPU's matmul ceiling.

1. Throughput: `CompiledPPO` for --hparams (default ppo_tf_cartpole), one warm-up iteration
   (tracing + XLA compilation, reported separately), then the median of --repeats timed
   iterations. One iteration = T x N env steps + GAE + all epochs x minibatches, one XLA program.
2. FLOP/s: the MLP's FLOPs per iteration, counted by hand: a dense layer costs 2*in*out per
   sample forward and ~2x that backward. Per iteration: acting (policy+value forward, T*N),
   `_train`'s behaviour pass (policy+value forward, T*N) and V(final_obs) (value forward, T*N),
   then n_epochs * minibatches * batch samples of forward+backward (3x forward). Env physics,
   softmax/Adam/GAE are not counted. Compared with the measured ceiling: a 2048^3 float32
   `tf.linalg.matmul` in a compiled function, timed in the same run.

Its numbers go to benchmarks/results/tools/compiled_ppo.jsonl with the machine and revision
(tool_records.py). Time to solve CartPole against SB3 is the campaign `compiled_cartpole`
(docs/campaigns.md).

    .venv/bin/python -m benchmarks.compiled_ppo
    .venv/bin/python -m benchmarks.compiled_ppo --hparams ppo_tf_cartpole --repeats 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402

import rl  # noqa: E402,F401
from benchmarks import tool_records  # noqa: E402
from rl import registry  # noqa: E402
from rl.compiled import CompiledPPO  # noqa: E402
from rl.envs.tf import make_tf_env  # noqa: E402


def dense_flops(sizes: list[int]) -> int:
    """Forward FLOPs per sample of a stack of dense layers with these widths."""
    return sum(2 * a * b for a, b in zip(sizes[:-1], sizes[1:], strict=False))


def iteration_flops(ppo: CompiledPPO) -> tuple[float, float]:
    """(FLOPs per iteration, forward FLOPs per sample of policy + value nets)."""
    hp, spec = ppo.hp, ppo.spec
    obs = 1
    for d in spec.obs_shape:
        obs *= d
    outputs = spec.num_actions if spec.discrete else 1
    hidden = list(hp.hidden_sizes)
    policy = dense_flops([obs, *hidden, outputs])
    value = dense_flops([obs, *hidden, 1]) if hp.separate_torsos else 2 * hidden[-1]
    forward = policy + value
    samples = ppo.steps_per_iteration
    minibatch = samples // ppo.agent.num_minibatches
    trained = hp.n_epochs * ppo.agent.num_minibatches * minibatch
    total = forward * samples * 2 + value * samples + 3 * forward * trained
    return float(total), float(forward)


def matmul_ceiling(n: int = 2048, repeats: int = 10) -> float:
    a = tf.random.normal([n, n])
    b = tf.random.normal([n, n])
    fn = tf.function(lambda x, y: tf.reduce_sum(tf.linalg.matmul(x, y)), jit_compile=True)
    fn(a, b).numpy()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(a, b).numpy()
        times.append(time.perf_counter() - start)
    return 2.0 * n**3 / min(times)


def throughput(hparams_set: str, repeats: int) -> dict:
    hp = registry.get_hparams(hparams_set)()
    hp.freeze()
    env = make_tf_env(hp.env, max_episode_steps=hp.max_episode_steps, **hp.env_kwargs)
    ppo = CompiledPPO(hp, env, seed=0)
    start = time.perf_counter()
    ppo.run_iteration()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        ppo.run_iteration()
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    flops, forward = iteration_flops(ppo)
    return {
        "steps_per_iteration": ppo.steps_per_iteration,
        "first_call_s": first,
        "iteration_s": seconds,
        "sps": ppo.steps_per_iteration / seconds,
        "flops_per_iteration": flops,
        "forward_flops_per_sample": forward,
        "flops_per_s": flops / seconds,
        "gradient_steps_per_iteration": hp.n_epochs * ppo.agent.num_minibatches,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hparams", default="ppo_tf_cartpole")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()

    ceiling = matmul_ceiling()
    tp = throughput(args.hparams, args.repeats)
    tool_records.append("compiled_ppo", vars(args), {**tp, "matmul_ceiling_flops": ceiling})
    print(f"== {args.hparams}: one iteration = one XLA program ({tp['steps_per_iteration']} env "
          f"steps, {tp['gradient_steps_per_iteration']} gradient steps)")  # fmt: skip
    print(f"first call (trace + compile + run) {tp['first_call_s']:8.2f} s")
    print(f"iteration (median of {args.repeats})      {tp['iteration_s'] * 1e3:8.1f} ms")
    print(f"env steps/s, whole iteration      {tp['sps']:>11,.0f}")
    print(f"MLP FLOPs per iteration           {tp['flops_per_iteration'] / 1e9:8.3f} GFLOP "
          f"({tp['forward_flops_per_sample']:.0f} forward FLOPs/sample)")  # fmt: skip
    print(f"achieved                          {tp['flops_per_s'] / 1e9:8.2f} GFLOP/s")
    print(f"matmul ceiling (2048^3 f32)       {ceiling / 1e9:8.2f} GFLOP/s")
    print(f"fraction of ceiling               {tp['flops_per_s'] / ceiling:8.2%}")


if __name__ == "__main__":
    main()
