#!/usr/bin/env python3
"""Many seeds at once: wall time of `train.py --copies 8` against `--copies 1` (one seed), same
hparams, run back to back and alternating, `--repeats` times; medians, and how many seeds reach
a greedy eval >= 475. `--copies 8` runs twice per round: as ONE program for all 8 seeds
(`seed_shards=1`, the default, `rl.compiled.ppo_seeds_iteration`) and split into one multi-seed
program per CPU core, run from one thread each (`seed_shards=0`, `rl.compiled.shard_threads`).

Columns: process = the whole train.py subprocess (TF import included); train = the trainer's wall
clock from the start of its loop to its end (tracing and XLA compilation included); cpu = the
subprocess's user+system CPU seconds (steadier than wall time when the machine is shared). With the
set's early stop (default), `--copies 8` runs until every seed has reached 475 (or the budget),
`--copies 1` until seed 0 has; `--no_early_stop` trains every seed for the whole budget on both
sides (the same work per seed).

    .venv/bin/python -m benchmarks.compiled_seeds
    .venv/bin/python -m benchmarks.compiled_seeds --no_early_stop --repeats 3
    .venv/bin/python -m benchmarks.compiled_seeds --sequential   # + the 8 seeds one by one
    .venv/bin/python -m benchmarks.compiled_seeds --cache warm   # compile cache warmed first

`--cache warm` (rl/utils/compile_cache.py): every configuration runs once untimed with seed 100
first, filling an XLA compile cache the timed runs load from (as an earlier run of the same
command on this machine leaves it); `--cache off` (default): every run compiles.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import tool_records

ROOT = Path(__file__).resolve().parents[1]
THRESHOLD = 475.0
CACHE = {"dir": "off"}  # RL_XLA_CACHE of the train.py subprocesses (--cache)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def train(hparams: str, copies: int, seed: int, overrides: str) -> dict:
    """One train.py subprocess; its times and, per copy, whether it reached THRESHOLD."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, str(ROOT / "train.py"), "--hparams", hparams, "--copies",
               str(copies), "--seed", str(seed), "--output_dir", out]  # fmt: skip
        if overrides:
            cmd += ["--hparam_override", overrides]
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "",
               "RL_XLA_CACHE": CACHE["dir"]}  # fmt: skip
        cpu, start = children_cpu(), time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        process, cpu = time.perf_counter() - start, children_cpu() - cpu
        if proc.returncode != 0:
            raise SystemExit(f"train.py failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        reached, train_wall, steps = [], 0.0, []
        for i in range(copies):
            run = Path(out) / f"run_{i}"
            pointer = json.loads((run / "checkpoints" / "latest.json").read_text())
            state = json.loads(
                (run / "checkpoints" / pointer["directory"] / "trainer.json").read_text()
            )
            rows = list(csv.DictReader(open(run / "progress.csv")))
            best = max(float(r["eval_return_mean"]) for r in rows)
            reached.append(best >= THRESHOLD)
            train_wall = max(train_wall, state["wall_seconds"])
            steps.append(state["env_steps"])
    return {"process": process, "train": train_wall, "cpu": cpu, "reached": reached,
            "env_steps": steps}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hparams", default="ppo_tf_cartpole")
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no_early_stop", action="store_true")
    parser.add_argument("--cache", choices=("off", "warm"), default="off")
    parser.add_argument(
        "--sequential", action="store_true", help="also train the seeds one by one, once"
    )
    args = parser.parse_args()
    overrides = "stop_at_eval_return=None" if args.no_early_stop else ""

    one_program = ",".join(x for x in (overrides, "seed_shards=1") if x)
    per_core = ",".join(x for x in (overrides, "seed_shards=0") if x)
    # (label, copies, overrides)
    configs = [
        ("--copies 1 (seed 0)", 1, overrides),
        (f"--copies {args.copies} (1/core)", args.copies, per_core),
        (f"--copies {args.copies} (1 program)", args.copies, one_program),
    ]
    if args.cache == "warm":
        CACHE["dir"] = tempfile.mkdtemp(prefix="compiled-seeds-xla-")
        for _, copies, extra in configs:
            train(args.hparams, copies, 100, extra)  # untimed: fills the compile cache
    results: dict[str, list[dict]] = {label: [] for label, _, _ in configs}
    for repeat in range(args.repeats):
        order = configs if repeat % 2 == 0 else configs[::-1]
        for label, copies, extra in order:
            result = train(args.hparams, copies, 0, extra)
            results[label].append(result)
            print(json.dumps({"repeat": repeat, "config": label, **result}), file=sys.stderr)
    sequential = None
    if args.sequential:
        parts = [train(args.hparams, 1, seed, overrides) for seed in range(args.copies)]
        sequential = {k: sum(p[k] for p in parts) for k in ("process", "train", "cpu")}
        sequential["reached"] = [p["reached"][0] for p in parts]

    mode = "no early stop" if args.no_early_stop else "early stop at eval >= 475 per seed"
    print(f"== {args.hparams}: {args.copies} seeds vs 1 seed ({mode}), compile cache "
          f"{args.cache}, median of {args.repeats}")  # fmt: skip
    header = f"{'run':<28} | {'process s':>9} {'train s':>8} {'cpu s':>7} | {'seeds >= 475':>12}"
    print(header)
    print("-" * len(header))
    med = {}
    for label, copies, _ in configs:
        rs = results[label]
        med[label] = {k: statistics.median(r[k] for r in rs) for k in ("process", "train", "cpu")}
        reached = f"{statistics.median(sum(r['reached']) for r in rs):.0f}/{copies}"
        m = med[label]
        print(f"{label:<28} | {m['process']:>9.1f} {m['train']:>8.1f} {m['cpu']:>7.1f} | "
              f"{reached:>12}")  # fmt: skip
    if sequential:
        print(f"{'8 x --copies 1 (seeds 0-7)':<28} | {sequential['process']:>9.1f} "
              f"{sequential['train']:>8.1f} {sequential['cpu']:>7.1f} | "
              f"{sum(sequential['reached']):>10}/{args.copies}")  # fmt: skip
    one = med[configs[0][0]]
    for label, _, _ in configs[1:]:
        many = med[label]
        ratios = ", ".join(f"{k} {many[k] / one[k]:.2f}x" for k in ("process", "train", "cpu"))
        print(f"ratio {label} / 1 seed: {ratios}")
        steps = [r["env_steps"] for r in results[label]]
        print(f"  env steps per seed at the end (last repeat): {steps[-1]}")
    tool_records.append(
        "compiled_seeds", vars(args), {"runs": results, "medians": med, "sequential": sequential}
    )


if __name__ == "__main__":
    main()
