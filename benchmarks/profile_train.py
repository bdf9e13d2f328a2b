#!/usr/bin/env python3
"""Where a training run's time goes: cProfile of `train.main` for a registered hparams set.

Runs the set as registered (overrides optional) in this process under cProfile and prints a
table of the functions with the most time of their own (`tottime`), with their share of the
run's wall time, then rl/'s functions by cumulative time. A learner-bound set (SAC on HalfCheetah)
shows its compiled update call on top; an actor-bound one shows env steps and action selection.
Tracing and compilation fall in the first calls, so profile enough steps for the steady state
to dominate, or compare two budgets.

    .venv/bin/python -m benchmarks.profile_train --hparams sac_halfcheetah \
        --hparam_override train_steps=20480
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rows(
    stats: pstats.Stats, key: int, top: int, under: str = ""
) -> list[tuple[float, float, int, str]]:
    """(own seconds, cumulative seconds, calls, where) of the `top` functions by column
    `key` of cProfile's stat tuples (2 = own time, 3 = cumulative), only those in files
    under `under` if given."""
    entries = [item for item in stats.stats.items() if item[0][0].startswith(under)]
    entries = sorted(entries, key=lambda item: item[1][key], reverse=True)[:top]
    rows = []
    for (path, line, name), (_, calls, own, cumulative, _) in entries:
        short = Path(path).relative_to(ROOT) if path.startswith(str(ROOT)) else Path(path).name
        where = f"{short}:{line}({name})" if line else name
        rows.append((own, cumulative, calls, where))
    return rows


def _print_table(title: str, rows: list[tuple[float, float, int, str]], wall: float) -> None:
    print(f"\n{title}\n")
    print("| own s | own % | cumulative s | cumulative % | calls | function |")
    print("|---|---|---|---|---|---|")
    for own, cumulative, calls, where in rows:
        print(
            f"| {own:.2f} | {100 * own / wall:.1f} | {cumulative:.2f} | "
            f"{100 * cumulative / wall:.1f} | {calls:,} | `{where}` |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hparams", required=True, help="a registered hparams set")
    parser.add_argument("--hparam_override", default="", help="as train.py's")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=15, help="rows per table")
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import train

    with tempfile.TemporaryDirectory() as output_dir:
        argv = ["--hparams", args.hparams, "--seed", str(args.seed), "--output_dir", output_dir]
        argv += ["--hparam_override", args.hparam_override] if args.hparam_override else []
        profile = cProfile.Profile()
        start = time.perf_counter()
        status = profile.runcall(train.main, argv)
        wall = time.perf_counter() - start
    if status != 0:  # train.main has said why, in one line
        return status
    stats = pstats.Stats(profile)
    print(f"{args.hparams} {args.hparam_override}: {wall:.1f} s wall, {stats.total_calls:,} calls")
    _print_table("Own time (where the time is spent)", _rows(stats, 2, args.top), wall)
    rl_rows = _rows(stats, 3, args.top, under=str(ROOT / "rl"))
    _print_table("Cumulative time in rl/ (what it is spent for)", rl_rows, wall)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
