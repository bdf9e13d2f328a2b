#!/usr/bin/env python3
"""Compiled PPO vs Python-env PPO with the same hyper-parameters: do they learn the same?

Runs `train.py --hparams ppo_tf_cartpole` twice per seed, one after the other:
  compiled  on "tf/CartPole-v1" (the set's env): rollout, GAE and all epochs in one XLA
            program per iteration, TF-ops CartPole, in-graph evaluation (rl.compiled);
  python    the same set with `--env CartPole-v1`: gymnasium SyncVectorEnv, the Python-env
            loop (rl.loop, in-process engine), evaluation on gymnasium envs.
Both train the whole budget (no early stop; `stop_at_eval_return=None`), evaluate greedily every
`eval.every_steps` (10 episodes), and are read back from their run dirs: the final evaluation's
mean return, the env steps (and wall seconds) of the first evaluation >= --threshold, and the
run's wall seconds (training loop incl. tracing/compilation and evaluations, as
benchmarks/solve.py counts). The summary gives mean +- std over seeds of the final return and
a Welch t statistic of the difference, so "the same within seed noise" is a number.

    .venv/bin/python -m benchmarks.compiled_vs_python_ppo                    # seeds 0 1 2
    .venv/bin/python -m benchmarks.compiled_vs_python_ppo --seeds 0 --budget 51200
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HPARAMS = "ppo_tf_cartpole"
PATHS = {"compiled": "tf/CartPole-v1", "python": "CartPole-v1"}


def run(path: str, seed: int, budget: int) -> dict:
    """One train.py run of HPARAMS on PATHS[path]; returns what its run dir recorded."""
    overrides = "stop_at_eval_return=None"
    overrides += f",train_steps={budget}"
    with tempfile.TemporaryDirectory() as out:
        cmd = [
            sys.executable, str(ROOT / "train.py"), "--hparams", HPARAMS,
            "--env", PATHS[path], "--seed", str(seed), "--output_dir", out,
            "--hparam_override", overrides,
        ]  # fmt: skip
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        )
        if proc.returncode != 0:
            raise SystemExit(f"train.py failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        run_dir = Path(out) / "run_0"
        pointer = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
        state = json.loads(
            (run_dir / "checkpoints" / pointer["directory"] / "trainer.json").read_text()
        )
        with open(run_dir / "progress.csv", newline="") as f:
            evals = [row for row in csv.DictReader(f) if row["eval_return_mean"]]
    return {
        "path": path,
        "seed": seed,
        "env_steps": state["env_steps"],
        "wall_seconds": state["wall_seconds"],
        "final_return": float(evals[-1]["eval_return_mean"]),
        "evals": [
            (int(r["env_steps"]), float(r["wall_seconds"]), float(r["eval_return_mean"]))
            for r in evals
        ],  # fmt: skip
    }


def first_at(evals: list[tuple[int, float, float]], threshold: float) -> tuple[int, float] | None:
    for steps, wall, mean in evals:
        if mean >= threshold:
            return steps, wall
    return None


def welch_t(a: list[float], b: list[float]) -> float:
    """(mean a - mean b) / sqrt(var a / n + var b / m); nan with fewer than 2 seeds a side."""
    if len(a) < 2 or len(b) < 2:
        return float("nan")
    se = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    diff = statistics.mean(a) - statistics.mean(b)
    return diff / se if se > 0 else (0.0 if diff == 0 else math.inf)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--budget",
        type=int,
        default=98 * 2048,
        help="env steps; the default is the set's 200k rounded up to whole 2048-step iterations, "
        "which the compiled path trains anyway, so both paths take the same steps",
    )
    parser.add_argument("--threshold", type=float, default=475.0)
    args = parser.parse_args()

    results = []
    for seed in args.seeds:
        for path in PATHS:
            results.append(run(path, seed, args.budget))
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)

    print(
        f"\n`{HPARAMS}` (same hparams on both paths), {results[0]['env_steps']:,} env steps, "
        f"greedy eval of 10 episodes every eval.every_steps; threshold {args.threshold}\n"
    )
    print("| path | seed | final eval return | env steps to threshold | wall s to threshold "
          "| wall s (whole run) |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for r in results:
        hit = first_at(r["evals"], args.threshold)
        to_steps, to_wall = (f"{hit[0]:,}", f"{hit[1]:.1f}") if hit else ("not reached", "-")
        print(
            f"| {r['path']} | {r['seed']} | {r['final_return']:.1f} | {to_steps} | {to_wall} "
            f"| {r['wall_seconds']:.1f} |"
        )
    print("\n| path | final return mean +- std | median steps to threshold | median wall s |")
    print("|---|---|---|---|")
    finals = {}
    for path in PATHS:
        rows = [r for r in results if r["path"] == path]
        finals[path] = [r["final_return"] for r in rows]
        spread = statistics.stdev(finals[path]) if len(rows) > 1 else 0.0
        hits = [first_at(r["evals"], args.threshold) for r in rows]
        reached = [h[0] for h in hits if h]
        steps = f"{statistics.median(reached):,.0f}" if reached else "not reached"
        steps += f" ({len(reached)}/{len(rows)} reached)"
        wall = statistics.median(r["wall_seconds"] for r in rows)
        print(f"| {path} | {statistics.mean(finals[path]):.1f} +- {spread:.1f} | {steps} "
              f"| {wall:.1f} |")  # fmt: skip
    t = welch_t(finals["compiled"], finals["python"])
    print(
        f"\nWelch t of the final-return difference (compiled - python): {t:.2f} "
        "(|t| < ~2: not distinguishable from seed noise at this number of seeds)"
    )


if __name__ == "__main__":
    main()
