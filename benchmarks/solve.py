#!/usr/bin/env python3
"""Time to solve: env steps and wall seconds until greedy eval reaches a threshold.

Runs `train.py` for an hparams set and several seeds (one subprocess each, one at a time),
stopping at the threshold, and prints a table with medians. With --sb3 it also runs
benchmarks/peers/sb3_solve.py in .venv-peers (benchmarks/peers/setup.sh) for the same
algo/env/seeds right after each of our runs (one process at a time) and prints the ratios.

    .venv/bin/python -m benchmarks.solve --hparams dqn_cartpole --seeds 0 1 2 --sb3 dqn

Wall seconds count from the start of the training loop (after TF import and env/agent
construction; tracing and XLA compilation inside the loop are counted) and include
evaluation, matching sb3_solve.py, which times from just before model.learn().
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "benchmarks" / "peers" / "sb3_solve.py"
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"  # benchmarks/peers/setup.sh
# The eval protocol of sb3_solve.py (its EVAL table), so both sides are judged alike.
PROTOCOL = {
    "CartPole-v1": {"every": 5000, "episodes": 10, "threshold": 475.0},
    "Acrobot-v1": {"every": 5000, "episodes": 10, "threshold": -100.0},
    "Pendulum-v1": {"every": 2000, "episodes": 5, "threshold": -200.0},
}


def run_ours(hparams: str, env: str, seed: int, budget: int, extra: str) -> dict:
    protocol = PROTOCOL[env]
    overrides = (
        f"stop_at_eval_return={protocol['threshold']},eval.every_steps={protocol['every']},"
        f"eval.episodes={protocol['episodes']},train_steps={budget}"
    )
    if extra:
        overrides += "," + extra
    with tempfile.TemporaryDirectory() as out:
        cmd = [
            sys.executable,
            str(ROOT / "train.py"),
            "--hparams",
            hparams,
            "--env",
            env,
            "--seed",
            str(seed),
            "--output_dir",
            out,
            "--hparam_override",
            overrides,
        ]
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        )
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
        "final_eval": state["last_eval_return"],
    }


def run_sb3(algo: str, env: str, seed: int, budget: int) -> dict:
    cmd = [
        str(PEERS_PYTHON),
        str(PEERS),
        "--algo",
        algo,
        "--env",
        env,
        "--seed",
        str(seed),
        "--budget",
        str(budget),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"sb3_solve.py failed:\n{proc.stderr[-3000:]}")
    line = json.loads(proc.stdout.strip().splitlines()[-1])
    solved = bool(line["solved"])
    return {
        "solved": solved,
        "steps": line["env_steps_to_solve"] if solved else line["env_steps_total"],
        "wall": line["wall_seconds_to_solve"] if solved else line["wall_seconds_total"],
        "sps": line["sps_overall"],
    }


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hparams", required=True)
    parser.add_argument("--env", default="CartPole-v1", choices=sorted(PROTOCOL))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--budget", type=int, default=100_000)
    parser.add_argument("--hparam_override", default="")
    parser.add_argument("--sb3", metavar="ALGO", help="also run SB3's ALGO back to back")
    args = parser.parse_args()

    rows = []
    for seed in args.seeds:
        ours = run_ours(args.hparams, args.env, seed, args.budget, args.hparam_override)
        peer = run_sb3(args.sb3, args.env, seed, args.budget) if args.sb3 else None
        rows.append((seed, ours, peer))
        print(json.dumps({"seed": seed, "ours": ours, "sb3": peer}), file=sys.stderr)

    header = f"{'seed':>4} | {'rl steps':>9} {'rl wall s':>9} {'rl sps':>7}"
    if args.sb3:
        header += f" | {'sb3 steps':>9} {'sb3 wall s':>10} {'sb3 sps':>7} | {'wall ratio':>10}"
    print(f"{args.hparams} on {args.env}, threshold {PROTOCOL[args.env]['threshold']}")
    print(header)
    print("-" * len(header))
    for seed, ours, peer in rows:
        mark = "" if ours["solved"] else "*"
        line = f"{seed:>4} | {ours['steps']:>8}{mark:1} {ours['wall']:>9.1f} {ours['sps']:>7.0f}"
        if peer:
            pmark = "" if peer["solved"] else "*"
            ratio = ours["wall"] / peer["wall"] if peer["wall"] else float("nan")
            line += (
                f" | {peer['steps']:>8}{pmark:1} {peer['wall']:>10.1f} "
                f"{(peer['sps'] or 0):>7.0f} | {ratio:>10.2f}"
            )
        print(line)
    med = [median([r[1][k] for r in rows]) for k in ("steps", "wall", "sps")]
    line = f"{'med':>4} | {med[0]:>9.0f} {med[1]:>9.1f} {med[2]:>7.0f}"
    if args.sb3:
        pmed = [median([r[2][k] for r in rows]) for k in ("steps", "wall")]
        line += f" | {pmed[0]:>9.0f} {pmed[1]:>10.1f} {'':>7} | {med[1] / pmed[1]:>10.2f}"
    print(line)
    print("(* = not solved within the budget: steps/wall are the whole run)")


if __name__ == "__main__":
    main()
