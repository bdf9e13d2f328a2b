#!/usr/bin/env python3
"""Env steps/s with 1 and 2 workers (train.py --num_workers) on an env-bound task.

The task: `SubstepCartPole`, CartPole-v1 whose step integrates the same equations of motion
with `substeps` explicit-Euler substeps of tau/substeps in plain Python (default 600: about
1 ms of real CPU work per step on the dev machine, printed below). The dynamics are CartPole's,
only integrated more finely, so the agents see a normal CartPole; the env simply costs what a
small physics simulator or an emulator costs. This is honestly env-bound: with cheap CartPole
(~20 us/step) the TF acting and learning would dominate and workers could not help. LunarLander
(Box2D, ~0.1 ms/step) was the other candidate; it is still cheaper than our acting step.

Two measurements, each the median over --repeats runs:
  env workers  on-policy path: the PPO agent's compiled collect loop (rl/rollout/driver.py) over
               4 env copies, in this process (--num_workers 1: SyncVectorEnv) or split over 2
               processes (make_vector_env(..., num_workers=2): GroupedAsyncVectorEnv).
               Rollout steps/s; the PPO update is not included.
  apex         replay path, whole training runs of a small DQN: the single-process trainer
               (--num_workers 1) against Ape-X with 2 actor processes + the learner
               (--num_workers 2). Env steps/s received by the learner, the median over the
               log intervals of a run (first and last dropped: actor start-up, final eval).

    .venv/bin/python benchmarks/workers.py                # both, 3 repeats
    .venv/bin/python benchmarks/workers.py --which apex --repeats 5

Run it on an otherwise idle machine: the workers and the main process share the cores.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from gymnasium.envs.classic_control import CartPoleEnv

ENV = "benchmarks.workers:SubstepCartPole"


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


def env_step_ms(substeps: int, steps: int = 300) -> float:
    env = SubstepCartPole(substeps)
    env.reset(seed=0)
    start = time.perf_counter()
    for i in range(steps):
        _, _, terminated, truncated, _ = env.step(i % 2)
        if terminated or truncated:
            env.reset()
    return (time.perf_counter() - start) / steps * 1e3


def env_workers_rate(num_workers: int, substeps: int, seconds: float) -> float:
    """PPO rollout steps/s over 4 env copies, in this process or in `num_workers` processes."""
    from rl import registry
    from rl.envs import make_vector_env
    from rl.rollout.driver import Driver

    hp = registry.get_hparams("ppo_cartpole")()
    hp.env, hp.num_envs, hp.env_kwargs = ENV, 4, {"substeps": substeps}
    hp.freeze()
    env, spec = make_vector_env(hp.env, 4, 0, env_kwargs=hp.env_kwargs, num_workers=num_workers)
    try:
        agent = registry.get_agent(hp.agent)(spec, hp, 0)
        driver = Driver(env, spec, agent)
        driver.reset(0)
        rollout = agent.steps_per_iteration  # vector steps that fill the rollout buffer
        driver.collect(rollout)  # trace and warm up
        agent.update()
        steps, collect_seconds = 0, 0.0
        while collect_seconds < seconds:
            start = time.perf_counter()
            driver.collect(rollout)  # one compiled call
            collect_seconds += time.perf_counter() - start
            steps += rollout * spec.num_envs
            agent.update()  # not timed: only the rollout is parallelized
        return steps / collect_seconds
    finally:
        env.close()


def apex_rate(num_workers: int, substeps: int, train_steps: int) -> float:
    """Learner-received env steps/s of a small DQN run (median over log intervals)."""
    import tensorflow as tf

    from rl import registry, training

    hp = registry.get_hparams("dqn")()
    hp.env, hp.env_kwargs = ENV, {"substeps": substeps}
    hp.num_envs = 2
    hp.train_steps = train_steps
    hp.learning_starts = 500
    hp.train_every = 64
    hp.gradient_steps = 8
    hp.hidden_sizes = [64, 64]
    hp.log_every = 500
    hp.eval.every_steps = train_steps
    hp.eval.episodes = 1
    hp.max_episode_steps = 200
    hp.checkpoint_every = train_steps
    hp.freeze()
    with tempfile.TemporaryDirectory() as run_dir:
        flags = training.Flags(num_workers=num_workers)  # Ape-X when > 1
        training.train(hp, [run_dir], [0], "bench", flags)
        rates = []
        for path in sorted(Path(run_dir, "train").glob("events.out.tfevents.*")):
            for event in tf.compat.v1.train.summary_iterator(str(path)):
                for value in event.summary.value:
                    if value.tag == "time/steps_per_second":
                        rates.append(float(tf.make_ndarray(value.tensor)))
    inner = rates[1:-1] or rates
    return statistics.median(inner)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--which", choices=["all", "env_workers", "apex"], default="all")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--substeps", type=int, default=600)
    parser.add_argument("--seconds", type=float, default=8.0, help="per env-workers timing")
    parser.add_argument("--train_steps", type=int, default=8000, help="per apex run")
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import rl  # noqa: F401  (fills the registries)

    print(f"env step: {env_step_ms(args.substeps):.2f} ms ({args.substeps} substeps), "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")  # fmt: skip
    rows = []
    kinds = ["env_workers", "apex"] if args.which == "all" else [args.which]
    for kind in kinds:
        samples: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.repeats):  # 1 and 2 interleaved, so a load change hits both
            for workers in (1, 2):
                if kind == "env_workers":
                    rate = env_workers_rate(workers, args.substeps, args.seconds)
                else:
                    rate = apex_rate(workers, args.substeps, args.train_steps)
                samples[workers].append(rate)
        medians = {w: statistics.median(samples[w]) for w in samples}
        rows += [(kind, w, medians[w], samples[w]) for w in (1, 2)]
        rows.append((kind, "speed-up", medians[2] / medians[1], []))
    print(f"\n{'path':<12} {'workers':>8} {'env steps/s':>12}  samples")
    for kind, workers, value, samples in rows:
        if workers == "speed-up":
            print(f"{kind:<12} {'2 vs 1':>8} {value:>11.2f}x")
        else:
            shown = ", ".join(f"{s:,.0f}" for s in samples)
            print(f"{kind:<12} {workers:>8} {value:>12,.0f}  [{shown}]")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rl, and this file's module
    main()
