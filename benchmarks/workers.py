#!/usr/bin/env python3
"""Ape-X and IMPALA actors: the process pool of the commit before Ray against the Ray actors.

For each hparams set (default `dqn_cartpole`: Ape-X, `impala_cartpole`: IMPALA) and N actors
(default 2 and 4), `train.py --num_workers N` runs whole trainings in two source trees, the
pool's (`--pool_tree`: a git worktree of commit 927cd17, the last with rl/workers' own process
pool) and this one (Ray actors), alternated within each repeat so that a change of load hits
both. Each run is a fresh train.py process (`stop_at_eval_return=None`, one evaluation at the
end); from its TensorBoard events it reports the medians over the log intervals (the first and
last dropped: actor start-up, final evaluation) of
  updates/s   learner update calls per second (`time/updates_per_second`)
  steps/s     actor env steps per second received by the learner (`time/steps_per_second`)
  lag         IMPALA's mean policy lag in updates (`workers/policy_lag`)
and the table gives, per cell, the median over --repeats runs and Ray / pool.

    git worktree add runs/rl-pool 927cd17 && ln -s "$PWD/.venv" runs/rl-pool/.venv
    .venv/bin/python -m benchmarks.workers --pool_tree runs/rl-pool --repeats 3

Run it on an otherwise idle machine: actors and learner share its cores. `SubstepCartPole`
below (CartPole with a costly step) is also the env-bound task of benchmarks/impala.py.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gymnasium.envs.classic_control import CartPoleEnv

ROOT = Path(__file__).resolve().parents[1]
TAGS = {
    "updates/s": "time/updates_per_second",
    "steps/s": "time/steps_per_second",
    "lag": "workers/policy_lag",  # IMPALA's only
}


class SubstepCartPole(CartPoleEnv):
    """CartPole-v1 integrated with `substeps` Euler substeps per step (real CPU work)."""

    def __init__(self, substeps: int = 600, **kwargs) -> None:
        super().__init__(**kwargs)
        self.substeps = substeps

    def step(self, action):
        x, x_dot, theta, theta_dot = (float(v) for v in self.state)
        force = self.force_mag if action == 1 else -self.force_mag
        total_mass, pml = self.total_mass, self.polemass_length
        dt = self.tau / self.substeps
        for _ in range(self.substeps):
            cos, sin = math.cos(theta), math.sin(theta)
            temp = (force + pml * theta_dot * theta_dot * sin) / total_mass
            theta_acc = (self.gravity * sin - cos * temp) / (
                self.length * (4.0 / 3.0 - self.masspole * cos * cos / total_mass)
            )
            x_acc = temp - pml * theta_acc * cos / total_mass
            x, x_dot = x + dt * x_dot, x_dot + dt * x_acc
            theta, theta_dot = theta + dt * theta_dot, theta_dot + dt * theta_acc
        # Hand the integrated state to CartPole's own bookkeeping (termination, reward):
        # one more step of length 0 leaves the state as it is.
        self.state = (x, x_dot, theta, theta_dot)
        tau, self.tau = self.tau, 0.0
        try:
            return super().step(action)
        finally:
            self.tau = tau


def run_rates(tree: Path, hparams_set: str, workers: int, train_steps: int) -> dict[str, float]:
    """One train.py run in `tree`: the medians of TAGS over its inner log intervals."""
    import tensorflow as tf

    override = f"stop_at_eval_return=None,eval.every_steps={train_steps},"
    override += f"checkpoint_every={train_steps}"
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "train.py", "--hparams", hparams_set, "--num_workers",
                   str(workers), "--train_steps", str(train_steps), "--hparam_override",
                   override, "--output_dir", out]  # fmt: skip
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{tree}: {' '.join(command)}\n{done.stderr[-3000:]}")
        series: dict[str, list[float]] = {name: [] for name in TAGS}
        for path in sorted(Path(out, "run_0", "train").glob("events.out.tfevents.*")):
            for event in tf.compat.v1.train.summary_iterator(str(path)):
                for value in event.summary.value:
                    for name, tag in TAGS.items():
                        if value.tag == tag:
                            series[name].append(float(tf.make_ndarray(value.tensor)))
    return {name: statistics.median(v[1:-1] or v) for name, v in series.items() if v}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool_tree", required=True, type=Path, help="worktree of 927cd17")
    parser.add_argument("--sets", default="dqn_cartpole,impala_cartpole")
    parser.add_argument("--workers", default="2,4")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--train_steps", type=int, default=30_000)
    args = parser.parse_args()
    trees = {"pool": args.pool_tree.resolve(), "ray": ROOT}
    if not (trees["pool"] / "rl" / "workers" / "actor_pool.py").exists():
        parser.error(f"--pool_tree {args.pool_tree} has no rl/workers/actor_pool.py")
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    cells = [(s, int(n)) for s in args.sets.split(",") for n in args.workers.split(",")]
    samples: dict[tuple, list[dict[str, float]]] = {}
    for repeat in range(args.repeats):
        for hparams_set, workers in cells:
            order = ("pool", "ray") if repeat % 2 == 0 else ("ray", "pool")
            for kind in order:
                start = time.monotonic()
                rates = run_rates(trees[kind], hparams_set, workers, args.train_steps)
                samples.setdefault((hparams_set, workers, kind), []).append(rates)
                print(f"  {hparams_set} N={workers} {kind}: "
                      + ", ".join(f"{k} {v:,.1f}" for k, v in rates.items())
                      + f" ({time.monotonic() - start:.0f} s)", flush=True)  # fmt: skip
    print(f"\n{'set':<16} {'N':>2} {'metric':<10} {'pool':>10} {'ray':>10} {'ray/pool':>9}")
    for hparams_set, workers in cells:
        for metric in TAGS:
            if metric not in samples[hparams_set, workers, "pool"][0]:
                continue
            median = {
                kind: statistics.median(r[metric] for r in samples[hparams_set, workers, kind])
                for kind in trees
            }
            print(f"{hparams_set:<16} {workers:>2} {metric:<10} {median['pool']:>10,.1f} "
                  f"{median['ray']:>10,.1f} {median['ray'] / median['pool']:>8.2f}x")  # fmt: skip
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
