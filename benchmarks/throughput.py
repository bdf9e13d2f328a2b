#!/usr/bin/env python3
"""Where the time of a training run goes: acting, learning, and the bare env as reference.

For an hparams set, builds the same env and agent as train.py and times, as medians over
--repeats runs in this one process:
  env only   random actions through the same gymnasium vector env (the floor for acting)
  collect    the compiled collect loop (agent acts in-graph, env steps via numpy_function,
             transitions go to replay)
  update     one `agent.update()` call (sampling K batches + K gradient steps in one call)
and prints a table plus the implied cost of one training env step; the numbers also go to
benchmarks/results/tools/throughput.jsonl with the machine and revision (tool_records.py).

    .venv/bin/python -m benchmarks.throughput --hparams dqn_cartpole
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402

import rl  # noqa: E402,F401
from benchmarks import tool_records  # noqa: E402
from benchmarks.timing import median_seconds  # noqa: E402
from rl import registry  # noqa: E402
from rl.agents.build import build_agent  # noqa: E402
from rl.envs import make_vector_env  # noqa: E402
from rl.rollout.driver import Driver  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hparams", default="dqn_cartpole")
    parser.add_argument("--hparam_override", default="")
    parser.add_argument("--steps", type=int, default=2048, help="vector steps per timing")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    hp = registry.get_hparams(args.hparams)()
    hp.override(args.hparam_override)
    hp.freeze()
    env, spec = make_vector_env(
        hp.env, hp.num_envs, 0, env_kwargs=hp.env_kwargs, max_episode_steps=hp.max_episode_steps
    )
    agent = build_agent(hp, spec, 0)
    driver = Driver(env, spec, agent)
    driver.reset(0)

    def env_only() -> None:
        for _ in range(args.steps):
            env.step(env.action_space.sample())

    driver.collect(max(hp.learning_starts // hp.num_envs + 1, 64))  # warm up, fill replay
    agent.env_steps.assign(max(hp.learning_starts, 1))
    agent.update()  # trace/compile once
    t_env = median_seconds(env_only, args.repeats)
    t_collect = median_seconds(lambda: driver.collect(args.steps), args.repeats)
    t_update = median_seconds(agent.update, args.repeats)

    n = args.steps * hp.num_envs
    k = getattr(hp, "gradient_steps", 1)
    per_env_step_update = t_update / hp.train_every
    rows = [
        ("env only (random actions)", f"{n / t_env:,.0f} env steps/s", t_env / n * 1e6),
        ("collect (act+env+observe)", f"{n / t_collect:,.0f} env steps/s", t_collect / n * 1e6),
        ("update (K grad steps)", f"{k / t_update:,.0f} grad steps/s", t_update / k * 1e6),
    ]
    print(f"{args.hparams} ({hp.env}, {hp.num_envs} env(s), median of {args.repeats})")
    print(f"{'part':<28} {'rate':>22} {'us each':>9}")
    for name, rate, micros in rows:
        print(f"{name:<28} {rate:>22} {micros:>9.1f}")
    total = t_collect / n + per_env_step_update
    print(
        f"training cost per env step: {total * 1e6:.0f} us "
        f"(collect {t_collect / n * 1e6:.0f} + update {per_env_step_update * 1e6:.0f}) "
        f"-> {1 / total:,.0f} env steps/s before evaluation"
    )
    results = {
        "env_only_env_steps_per_s": n / t_env,
        "collect_env_steps_per_s": n / t_collect,
        "update_gradient_steps_per_s": k / t_update,
        "training_us_per_env_step": total * 1e6,
        "num_envs": hp.num_envs,
    }
    tool_records.append("throughput", vars(args), results)
    _ = np


if __name__ == "__main__":
    main()
