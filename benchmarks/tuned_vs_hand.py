#!/usr/bin/env python3
"""A tuned set against its hand-tuned parent on fresh seeds: median env steps to a threshold and
the IQM of the final evaluation with a 95% bootstrap confidence interval.

    .venv/bin/python -m benchmarks.tuned_vs_hand --sets ppo_cartpole ppo_cartpole_tuned \\
        --seeds 10 --first_seed 20000 --train_steps 50000

Each set trains `--seeds` copies (`train.py --copies N --seed S`, one process per set, the
copies one after another) for the whole budget (`stop_at_eval_return=None`, so the final
evaluation is at the budget, not at the stop); the env steps to the threshold are those of the
first evaluation at or above it (progress.csv). Seeds from 20000 are disjoint from the study's
tuning seeds (0..) and its fresh re-run seeds (10000..). A run that never reaches the
threshold counts as not solved (the median is then over an infinite value, as it should be).
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]


def iqm(values) -> float:
    return float(stats.trim_mean(values, 0.25))


def bootstrap_ci(values: list[float]) -> tuple[float, float]:
    result = stats.bootstrap(
        (np.asarray(values),), iqm, confidence_level=0.95, method="percentile",
        n_resamples=10_000, rng=np.random.default_rng(0),
    )  # fmt: skip
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def train_set(name: str, seeds: int, first_seed: int, train_steps: int, out: Path) -> list[dict]:
    overrides = f"stop_at_eval_return=None,train_steps={train_steps}"
    command = [sys.executable, str(ROOT / "train.py"), "--hparams", name, "--copies", str(seeds)]
    command += ["--seed", str(first_seed), "--output_dir", str(out), "--hparam_override", overrides]
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    runs = []
    for i in range(seeds):
        with open(out / f"run_{i}" / "progress.csv", newline="") as f:
            rows = [(int(r["env_steps"]), float(r["eval_return_mean"])) for r in csv.DictReader(f)]
        runs.append({"seed": first_seed + i, "rows": rows})
    return runs


def summarize(runs: list[dict], threshold: float) -> dict:
    to_threshold = [next((s for s, r in run["rows"] if r >= threshold), math.inf) for run in runs]
    final = [run["rows"][-1][1] for run in runs]
    return {
        "median_steps": statistics.median(to_threshold),
        "solved": sum(math.isfinite(s) for s in to_threshold),
        "to_threshold": to_threshold,
        "final": final,
        "iqm": iqm(final),
        "ci": bootstrap_ci(final),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs=2, required=True, metavar=("HAND", "TUNED"))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first_seed", type=int, default=20_000)
    parser.add_argument("--train_steps", type=int, default=50_000)
    parser.add_argument("--threshold", type=float, default=475.0)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets:
            runs = train_set(name, args.seeds, args.first_seed, args.train_steps, Path(tmp) / name)
            results[name] = summarize(runs, args.threshold)
    seeds = f"{args.first_seed}..{args.first_seed + args.seeds - 1}"
    print(f"{args.seeds} seeds ({seeds}), {args.train_steps:,} env steps each, no early stop")
    print(f"{'set':<22} {'median steps to ' + str(args.threshold):>24} {'solved':>7} "
          f"{'IQM final eval [95% CI]':>28}")  # fmt: skip
    for name, r in results.items():
        low, high = r["ci"]
        print(
            f"{name:<22} {r['median_steps']:>24,.0f} {r['solved']:>4}/{args.seeds:<2} "
            f"{r['iqm']:>10.1f} [{low:.1f}, {high:.1f}]"
        )
    for name, r in results.items():
        steps = ", ".join("-" if math.isinf(s) else f"{s}" for s in r["to_threshold"])
        print(f"{name} steps to threshold per seed: {steps}")
        print(f"{name} final eval per seed: {', '.join(f'{v:.1f}' for v in r['final'])}")


if __name__ == "__main__":
    main()
