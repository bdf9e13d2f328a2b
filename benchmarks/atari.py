#!/usr/bin/env python3
"""Atari learning evidence beside SB3: `ppo_breakout` and SB3 PPO (rl-baselines3-zoo's Breakout
settings) for the same frame budget, one after the other; raw scores of full games, frames/s,
wall, and a video of our final policy.

    .venv/bin/python -m benchmarks.atari              # 2M frames, seed 0, in runs/atari_benchmark
    .venv/bin/python -m benchmarks.atari --frames 20000 --eval_games 2 --output_dir runs/atari_tiny

Ours: train.py --hparams ppo_breakout --train_steps frames/4, the set as registered except that
its lr and clip-range schedules (linear to 0 over the 10M-step run) are rescaled to end at the
budget, as the zoo's `lin_` schedules do over whatever budget SB3 is given; one evaluation, at
the end: `eval.episodes` full games (through lost lives) scored raw, sticky actions 0.25, actions
sampled from the policy, 27,000-step cap (rl/hparams/atari.py). Then train.py --training False
--record_video films one game of the final policy (run_0/videos/*.mp4).

SB3: benchmarks/sb3_atari_ppo.py --budget in the peers venv (.venv-peers, made by
benchmarks/peers/setup.sh), the same evaluation protocol on SB3's side.

frames/s is the steady training rate: emulator frames (agent steps x 4) between the first
and the last log point before the final evaluation, so start-up, the first trace/compile and the
evaluation are left out (SB3: between the first and last rollout). wall is the whole command:
start-up, training, the final games (ours: plus the video run, timed apart). Never run this
beside another measurement on the 2-core machine.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SB3_PYTHON = ROOT / ".venv-peers" / "bin" / "python"  # benchmarks/peers/setup.sh
FRAME_SKIP = 4
ROLLOUT = 8 * 128  # ppo_breakout's (and the zoo's) env steps per update
GRADIENT_STEPS_PER_UPDATE = 4 * (ROLLOUT // 256)  # 4 epochs of 256-sample minibatches


def run(cmd: list[str], log: Path) -> float:
    """Runs `cmd`, its stdout and stderr to `log`; returns its wall seconds or exits."""
    start = time.perf_counter()
    with open(log, "w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd[:3])} ... failed ({proc.returncode}); see {log}")
    return seconds


def train_scalars(run_dir: Path, tag: str) -> list[tuple[int, float]]:
    """(env steps, value of `tag`) at every log point of train.py's TensorBoard train/ dir."""
    import rl  # noqa: F401 - imports TensorFlow with its load-time log lines kept off stderr

    # isort: split
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")  # summary_iterator's deprecation notice
    points = []
    for path in sorted((run_dir / "train").glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag == tag:
                    points.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return sorted(points)


def ours(args: argparse.Namespace, out: Path) -> dict:
    steps = args.frames // FRAME_SKIP
    gradient_steps = max(1, steps // ROLLOUT * GRADIENT_STEPS_PER_UPDATE)
    overrides = ",".join(
        [
            f"lr=linear(2.5e-4,0.0,{gradient_steps})",
            f"clip_range=linear(0.1,0.0,{gradient_steps})",
            f"eval.every_steps={steps}",
            f"eval.episodes={args.eval_games}",
            f"checkpoint_every={steps}",
            f"log_every={args.log_steps}",
        ]
    )
    base = [sys.executable, "train.py", "--hparams", "ppo_breakout", "--seed", str(args.seed)]
    base += ["--output_dir", str(out / "ours")]
    train_cmd = [*base, "--train_steps", str(steps), "--hparam_override", overrides]
    wall = run(train_cmd, out / "ours_train.log")
    run_dir = out / "ours" / "run_0"
    with open(run_dir / "progress.csv", newline="") as f:
        final = list(csv.DictReader(f))[-1]
    marks = [
        m for m in train_scalars(run_dir, "time/wall_seconds") if m[0] < steps
    ]  # before the final evaluation
    (s0, t0), (s1, t1) = marks[0], marks[-1]
    # Test mode plays with the hparams the run saved: no overrides.
    video_cmd = [*base, "--training", "False", "--record_video", "--test_episodes", "1"]
    video_wall = run(video_cmd, out / "ours_video.log")
    videos = sorted((run_dir / "videos").glob("*.mp4"))
    return {
        "agent_steps": int(final["env_steps"]),
        "score": float(final["eval_raw_score_mean"]),
        "score_std": float(final["eval_return_std"]),
        "frames_per_second": (s1 - s0) * FRAME_SKIP / (t1 - t0) if t1 > t0 else float("nan"),
        "wall": wall,
        "video": str(videos[-1]) if videos else "none written",
        "video_wall": video_wall,
        "command": " ".join(train_cmd[1:]),
    }


def sb3(args: argparse.Namespace, out: Path) -> dict:
    steps = args.frames // FRAME_SKIP
    cmd = [str(args.sb3_python), "benchmarks/sb3_atari_ppo.py", "--budget", str(steps)]
    cmd += ["--eval_games", str(args.eval_games), "--seed", str(args.seed)]
    log = out / "sb3.log"
    wall = run(cmd, log)
    result = json.loads(log.read_text().strip().splitlines()[-1])
    scores = result["eval_scores"]
    mean = sum(scores) / len(scores)
    return {
        "agent_steps": result["agent_steps"],
        "score": mean,
        "score_std": (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5,
        "frames_per_second": result["steady_steps_per_second"] * FRAME_SKIP,
        "wall": wall,
        "video": "-",
        "curve": result.get("curve"),  # (agent steps, mean raw score of full games, games)
        "command": " ".join(cmd[1:]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=2_000_000, help="emulator frames")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval_games", type=int, default=10, help="full games at the end")
    parser.add_argument("--log_steps", type=int, default=10_240, help="agent steps per log row")
    parser.add_argument("--sides", default="ours,sb3")
    parser.add_argument("--sb3_python", type=Path, default=DEFAULT_SB3_PYTHON)
    parser.add_argument("--output_dir", type=Path, default=ROOT / "runs" / "atari_benchmark")
    args = parser.parse_args()
    sides = args.sides.split(",")
    if not set(sides) <= {"ours", "sb3"}:
        parser.exit(2, f"--sides takes ours and/or sb3, got {args.sides!r}\n")
    if args.frames < 2 * ROLLOUT * FRAME_SKIP:
        parser.exit(2, f"--frames must be >= {2 * ROLLOUT * FRAME_SKIP} (two PPO updates)\n")
    if "sb3" in sides and not args.sb3_python.exists():
        hint = "run benchmarks/peers/setup.sh"
        parser.exit(2, f"no SB3 venv at {args.sb3_python}: {hint}, or --sides ours\n")
    if args.output_dir.exists() and any(args.output_dir.iterdir()):
        parser.exit(2, f"--output_dir {args.output_dir} is not empty: choose a new one\n")
    args.output_dir.mkdir(parents=True, exist_ok=True)

    results = {}
    for side in sides:
        print(f"running {side} ({args.frames:,} frames, seed {args.seed}) ...", flush=True)
        results[side] = (ours if side == "ours" else sb3)(args, args.output_dir)
    (args.output_dir / "results.json").write_text(json.dumps(results, indent=1) + "\n")

    print(
        f"\nBreakout, {args.frames:,} frames ({args.frames // FRAME_SKIP:,} agent steps), seed "
        f"{args.seed}; raw score: {args.eval_games} full games at the end, sticky actions 0.25"
    )
    print(
        f"| {'':<22} | {'agent steps':>11} | {'raw score':>14} | {'frames/s':>9} | "
        f"{'wall (s)':>9} | {'at 2M frames':>12} |"
    )
    print(f"|{'-' * 24}|{'-' * 13}|{'-' * 16}|{'-' * 11}|{'-' * 11}|{'-' * 14}|")
    names = {"ours": "ours (ppo_breakout)", "sb3": "SB3 PPO (zoo)"}
    for side, r in results.items():
        score = f"{r['score']:.1f} ± {r['score_std']:.1f}"
        projected = f"{2_000_000 / r['frames_per_second'] / 3600:.1f} h"  # training alone
        print(
            f"| {names[side]:<22} | {r['agent_steps']:>11,} | {score:>14} | "
            f"{r['frames_per_second']:>9,.0f} | {r['wall']:>9,.0f} | {projected:>12} |"
        )
    print("at 2M frames: 2,000,000 / frames/s, the training time a 2M-frame run would take")
    if "ours" in results:
        print(f"video of our final policy: {results['ours']['video']}")
    for side, r in results.items():
        print(f"{side}: {r['command']}")


if __name__ == "__main__":
    main()
