#!/usr/bin/env python3
"""IMPALA in one process against IMPALA with asynchronous actors (train.py --num_workers 2).

Whole training runs of `impala_cartpole` (or another set) for a fixed number of env steps, with
evaluation every 5k steps and no early stop; per run: env steps/s received by the learner (the
median over the log intervals, first and last dropped: start-up, final evaluation), learner
updates/s, the mean policy lag (asynchronous runs), the env step at which the greedy evaluation
first reached 475 and the last evaluation. Single-process and asynchronous runs alternate, so
a change of machine load hits both.

    .venv/bin/python -m benchmarks.impala                          # CartPole, 1 repeat
    .venv/bin/python -m benchmarks.impala --substeps 600 --repeats 2

`--substeps K` trains on `SubstepCartPole` (below) (the same dynamics integrated
with K Euler substeps: ~1 ms of Python per step at 600), where acting, not learning, is the
bottleneck; plain CartPole costs ~20 us per step. The actors and the learner share the
machine's cores: run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import tempfile
from pathlib import Path

from gymnasium.envs.classic_control.cartpole import CartPoleEnv

from benchmarks import tool_records

TAGS = ("time/steps_per_second", "time/updates_per_second", "workers/policy_lag")


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


def run(hparams_set: str, num_workers: int, seed: int, train_steps: int, substeps: int) -> dict:
    import tensorflow as tf

    from rl import registry, training

    hp = registry.get_hparams(hparams_set)()
    hp.train_steps = train_steps
    hp.stop_at_eval_return = None
    hp.eval.every_steps = 5000
    hp.checkpoint_every = train_steps
    hp.log_every = 2000
    if substeps:
        hp.env, hp.env_kwargs = "benchmarks.impala:SubstepCartPole", {"substeps": substeps}
        hp.max_episode_steps = 500
    hp.freeze()
    with tempfile.TemporaryDirectory() as run_dir:
        training.train(hp, [run_dir], [seed], "bench", training.Flags(num_workers=num_workers))
        scalars: dict[str, list[float]] = {}
        for path in sorted(Path(run_dir, "train").glob("events.out.tfevents.*")):
            for event in tf.compat.v1.train.summary_iterator(str(path)):
                for value in event.summary.value:
                    if value.tag in TAGS:
                        scalars.setdefault(value.tag, []).append(
                            float(tf.make_ndarray(value.tensor))
                        )
        with open(Path(run_dir, "progress.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
    evals = [(int(r["env_steps"]), float(r["eval_return_mean"])) for r in rows]
    rates = scalars["time/steps_per_second"]
    updates = scalars.get("time/updates_per_second")
    lags = scalars.get("workers/policy_lag")
    return {
        "steps_per_second": statistics.median(rates[1:-1] or rates),
        "updates_per_second": statistics.median(updates[1:-1] or updates) if updates else None,
        "policy_lag": statistics.mean(lags) if lags else None,
        "first_475": next((step for step, ret in evals if ret >= 475.0), None),
        "last_eval": evals[-1][1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hparams", default="impala_cartpole")
    parser.add_argument("--train_steps", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--substeps", type=int, default=0, help="0: plain CartPole")
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import rl  # noqa: F401  (fills the registries)

    load = os.getloadavg()[0]
    print(f"{args.hparams}, {args.train_steps:,} env steps, seed {args.seed}, substeps "
          f"{args.substeps}, {os.cpu_count()} cores, load average {load:.1f}")  # fmt: skip
    results: list[tuple[int, dict]] = []
    for _ in range(args.repeats):
        for workers in (1, 2):
            results.append((workers, run(args.hparams, workers, args.seed, args.train_steps,
                                         args.substeps)))  # fmt: skip
    print(f"\n{'workers':>7} {'env steps/s':>12} {'updates/s':>10} {'policy lag':>10} "
          f"{'first eval >= 475':>18} {'last eval':>10}")  # fmt: skip
    for workers, r in results:
        updates = f"{r['updates_per_second']:.1f}" if r["updates_per_second"] else "-"
        lag = f"{r['policy_lag']:.2f}" if r["policy_lag"] is not None else "-"
        first = f"{r['first_475']:,}" if r["first_475"] else "never"
        print(f"{workers:>7} {r['steps_per_second']:>12,.0f} {updates:>10} {lag:>10} "
              f"{first:>18} {r['last_eval']:>10.1f}")  # fmt: skip
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    runs = [{"workers": workers, **r} for workers, r in results]
    tool_records.append("impala", vars(args), runs)


if __name__ == "__main__":
    main()
