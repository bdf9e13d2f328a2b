#!/usr/bin/env python3
"""Time to solve CartPole with DQN: the compiled path (`dqn_tf_cartpole`: TF-ops env, one XLA
program per iteration with an in-graph replay) vs the Python-env path (`dqn_cartpole`) vs
Stable-Baselines3 DQN (rl-baselines3-zoo settings), run back to back for each seed.

All three use sb3_solve.py's CartPole protocol (greedy eval every 5000 env steps, 10 episodes,
threshold 475). Wall seconds count from the start of the training loop and include tracing,
XLA compilation and evaluation (benchmarks/solve.py explains the accounting); the process
column is the whole train.py subprocess, TF import included.

    .venv/bin/python -m benchmarks.compiled_dqn --seeds 0 1 2
    .venv/bin/python -m benchmarks.compiled_dqn --seeds 0 --no_sb3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from benchmarks.compiled_ppo import run_ours as run_compiled  # noqa: E402
from benchmarks.solve import PEERS_PYTHON, run_sb3  # noqa: E402
from benchmarks.solve import run_ours as run_python_path  # noqa: E402


def timed(fn, *args) -> dict:
    start = time.perf_counter()
    out = fn(*args)
    return {**out, "process": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--budget", type=int, default=100_000)
    parser.add_argument("--no_sb3", action="store_true", help="skip the SB3 runs")
    args = parser.parse_args()
    sb3 = PEERS_PYTHON.exists() and not args.no_sb3

    sides = ["compiled", "python"] + (["sb3"] if sb3 else [])
    rows = []
    for seed in args.seeds:
        row = {
            "compiled": timed(run_compiled, "dqn_tf_cartpole", seed, args.budget),
            "python": timed(run_python_path, "dqn_cartpole", "CartPole-v1", seed, args.budget, ""),
        }
        if sb3:
            row["sb3"] = timed(run_sb3, "dqn", "CartPole-v1", seed, args.budget)
        rows.append((seed, row))
        print(json.dumps({"seed": seed, **row}), file=sys.stderr)

    print(f"== DQN time to solve CartPole-v1 (greedy eval >= 475), budget {args.budget:,}")
    header = f"{'seed':>4}" + "".join(
        f" | {side + ' steps':>14} {'wall s':>7} {'proc s':>7}" for side in sides
    )
    print(header)
    print("-" * len(header))

    def cells(result: dict) -> str:
        mark = "" if result["solved"] else "*"
        return f" | {result['steps']:>13}{mark:1} {result['wall']:>7.1f} {result['process']:>7.1f}"

    for seed, row in rows:
        print(f"{seed:>4}" + "".join(cells(row[side]) for side in sides))
    med = f"{'med':>4}"
    for side in sides:
        values = {k: statistics.median(r[side][k] for _, r in rows) for k in ("steps", "wall")}
        process = statistics.median(r[side]["process"] for _, r in rows)
        med += f" | {values['steps']:>14.0f} {values['wall']:>7.1f} {process:>7.1f}"
    print(med)
    compiled_wall = statistics.median(r["compiled"]["wall"] for _, r in rows)
    for side in sides[1:]:
        other = statistics.median(r[side]["wall"] for _, r in rows)
        print(f"median wall ratio compiled / {side}: {compiled_wall / other:.2f}")
    print("(* = not solved within the budget: steps/wall are the whole run)")


if __name__ == "__main__":
    main()
