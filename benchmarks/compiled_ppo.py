#!/usr/bin/env python3
"""The compiled PPO path: iteration throughput, FLOP/s against this CPU's matmul ceiling, and
time to solve CartPole vs Stable-Baselines3 PPO.

1. Throughput: `CompiledPPO` for --hparams (default ppo_tf_cartpole), one warm-up iteration
   (tracing + XLA compilation, reported separately), then the median of --repeats timed
   iterations. One iteration = T x N env steps + GAE + all epochs x minibatches, one XLA program.
2. FLOP/s: the MLP's FLOPs per iteration, counted by hand: a dense layer costs 2*in*out per
   sample forward and ~2x that backward. Per iteration: acting (policy+value forward, T*N),
   `_train`'s behaviour pass (policy+value forward, T*N) and V(final_obs) (value forward, T*N),
   then n_epochs * minibatches * batch samples of forward+backward (3x forward). Env physics,
   softmax/Adam/GAE are not counted. Compared with the measured ceiling: a 2048^3 float32
   `tf.linalg.matmul` in a compiled function, timed in the same run.
3. Time to solve: `train.py --hparams ppo_tf_cartpole --seed S` as a subprocess (wall seconds
   from the start of the training loop, compilation included, as benchmarks/solve.py counts),
   with solve.py's CartPole protocol (eval every 5000 steps, 10 episodes, threshold 475); then,
   if .venv-peers/bin/python exists (benchmarks/peers/setup.sh), SB3 PPO through
   benchmarks/peers/sb3_solve.py for the same seed, one process at a time. Ours runs twice per
   seed: with the XLA compile cache off (every program compiled: a first run on this machine)
   and warm (rl/utils/compile_cache.py; the cache filled by one untimed run of another seed
   before the timed runs, as any earlier run of the set on this machine fills it).

    .venv/bin/python -m benchmarks.compiled_ppo
    .venv/bin/python -m benchmarks.compiled_ppo --seeds 0 --no_sb3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parents[1]

import tensorflow as tf  # noqa: E402

import rl  # noqa: E402,F401
from benchmarks.solve import PEERS_PYTHON, PROTOCOL, run_sb3  # noqa: E402
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


def run_ours(hparams_set: str, seed: int, budget: int, cache: str = "off") -> dict:
    protocol = PROTOCOL["CartPole-v1"]
    overrides = (
        f"stop_at_eval_return={protocol['threshold']},eval.every_steps={protocol['every']},"
        f"eval.episodes={protocol['episodes']},train_steps={budget}"
    )
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, str(ROOT / "train.py"), "--hparams", hparams_set, "--seed",
               str(seed), "--output_dir", out, "--hparam_override", overrides]  # fmt: skip
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "RL_XLA_CACHE": cache}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"train.py failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        run = Path(out) / "run_0"
        pointer = json.loads((run / "checkpoints" / "latest.json").read_text())
        state = json.loads(
            (run / "checkpoints" / pointer["directory"] / "trainer.json").read_text()
        )
    solved = state["first_step_at_threshold"] is not None
    return {
        "solved": solved,
        "steps": state["first_step_at_threshold"] if solved else state["env_steps"],
        "wall": state["first_wall_at_threshold"] if solved else state["wall_seconds"],
        "sps": state["env_steps"] / max(state["wall_seconds"], 1e-9),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hparams", default="ppo_tf_cartpole")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--budget", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--no_sb3", action="store_true", help="skip the SB3 runs")
    args = parser.parse_args()

    ceiling = matmul_ceiling()
    tp = throughput(args.hparams, args.repeats)
    print(json.dumps({"throughput": tp, "matmul_ceiling_flops": ceiling}), file=sys.stderr)
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

    sb3 = PEERS_PYTHON.exists() and not args.no_sb3
    cache = tempfile.mkdtemp(prefix="compiled-ppo-xla-")
    run_ours(args.hparams, 1000, args.budget, cache)  # untimed: fills the compile cache
    rows, warm = [], {}
    for seed in args.seeds:
        ours = run_ours(args.hparams, seed, args.budget)
        warm[seed] = run_ours(args.hparams, seed, args.budget, cache)
        peer = run_sb3("ppo", "CartPole-v1", seed, args.budget) if sb3 else None
        rows.append((seed, ours, peer))
        print(json.dumps({"seed": seed, "ours": ours, "ours_warm_cache": warm[seed],
                          "sb3": peer}), file=sys.stderr)  # fmt: skip
    print(f"\n== time to solve CartPole (greedy eval >= 475, 10 episodes every 5000 steps), "
          f"budget {args.budget:,}")  # fmt: skip
    header = f"{'seed':>4} | {'rl steps':>9} {'rl wall s':>9} {'rl sps':>8}"
    if sb3:
        header += f" | {'sb3 steps':>9} {'sb3 wall s':>10} {'sb3 sps':>7} | {'wall ratio':>10}"
    print(header)
    print("-" * len(header))
    for seed, ours, peer in rows:
        mark = "" if ours["solved"] else "*"
        line = f"{seed:>4} | {ours['steps']:>8}{mark:1} {ours['wall']:>9.1f} {ours['sps']:>8.0f}"
        if peer:
            pmark = "" if peer["solved"] else "*"
            line += (
                f" | {peer['steps']:>8}{pmark:1} {peer['wall']:>10.1f} {(peer['sps'] or 0):>7.0f}"
                f" | {ours['wall'] / peer['wall']:>10.3f}"
            )
        print(line)
    med = {k: statistics.median(r[1][k] for r in rows) for k in ("steps", "wall", "sps")}
    line = f"{'med':>4} | {med['steps']:>9.0f} {med['wall']:>9.1f} {med['sps']:>8.0f}"
    if sb3:
        pmed = {k: statistics.median(r[2][k] for r in rows) for k in ("steps", "wall")}
        line += (
            f" | {pmed['steps']:>9.0f} {pmed['wall']:>10.1f} {'':>7} | "
            f"{med['wall'] / pmed['wall']:>10.3f}"
        )
    print(line)
    print("(* = not solved within the budget: steps/wall are the whole run; wall includes "
          "tracing and XLA compilation; compile cache off)")  # fmt: skip
    print("\n== the same with a warm compile cache (filled by an untimed run of seed 1000)")
    for seed, _, peer in rows:
        ours = warm[seed]
        mark = "" if ours["solved"] else "*"
        line = f"{seed:>4} | {ours['steps']:>8}{mark:1} {ours['wall']:>9.1f} {ours['sps']:>8.0f}"
        if peer:
            line += f" | sb3 wall {peer['wall']:>6.1f} | ratio {ours['wall'] / peer['wall']:.3f}"
        print(line)
    warm_wall = statistics.median(w["wall"] for w in warm.values())
    line = f"{'med':>4} | rl wall {warm_wall:.1f} s"
    if sb3:
        sb3_wall = statistics.median(r[2]["wall"] for r in rows)
        line += f" | sb3 wall {sb3_wall:.1f} s | ratio {warm_wall / sb3_wall:.3f}"
    print(line)


if __name__ == "__main__":
    main()
