#!/usr/bin/env python3
"""Atari (and any other set's) training throughput with XLA on and off: where the time goes.

Issue 19: `ppo_breakout` trained at 13-16 agent steps/s with `jit_compile=True` and ~400 without,
because XLA:CPU's convolution kernels (above all the kernel gradient inside the learner's loop)
are far slower than TF's default oneDNN ones. This measures, for each hparams set and for
`jit_compile` false / true (and `auto`, which resolves to one of them: rl/utils/compiler.py):

  env only    random actions through the same gymnasium vector env: env steps/s and emulator
              frames/s (x frame_skip) -- the floor of any agent;
  act         one call of the agent's acting function on a vector-env batch, compiled with TF's
              kernels and with XLA (independent of jit_compile, which decides the learner);
  update      one `agent.update()` (a PPO update over its rollout; a DQN update of
              `gradient_steps` steps), as env steps of training it pays for per second;
  whole loop  `train.py` itself for --loop_steps env steps in a subprocess, evaluation shrunk to
              one 20-step game and checkpoints pushed past the end; agent steps/s between the
              first and the last evaluation row (so start-up and the first compile are left out).

In-process parts alternate the two compilers within one process and quote medians of --repeats
(the dev machine's 2 cores are shared: never compare numbers from different runs).

    .venv/bin/python -m benchmarks.atari_throughput --sets ppo_breakout dqn_pong
    .venv/bin/python -m benchmarks.atari_throughput --sets sac_pendulum --parts update,loop
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parents[1]
import tensorflow as tf  # noqa: E402

import rl  # noqa: E402,F401
from benchmarks import tool_records  # noqa: E402
from benchmarks.timing import median_seconds  # noqa: E402
from rl import registry  # noqa: E402
from rl.agents.build import build_agent  # noqa: E402
from rl.envs import make_vector_env  # noqa: E402
from rl.hparams import HParams  # noqa: E402
from rl.rollout.driver import Driver  # noqa: E402

# Per-set changes so a few thousand steps exercise the learner: DQN's replay starts learning at
# once from a small buffer (the registered 100k-step warm-up would never end in a benchmark).
SET_OVERRIDES = {
    "dqn_pong": "learning_starts=1000,buffer_size=20000",
}
# Evaluation and checkpoints out of the way of the whole-loop timing (rows every --log_steps).
LOOP_OVERRIDES = "eval.episodes=1,eval.max_episode_steps=20,checkpoint_every=1000000000"
COMPILERS = (False, True)


def build(name: str, jit: bool | str, extra: str = "") -> HParams:
    hp = registry.get_hparams(name)()
    hp.override(",".join(filter(None, [SET_OVERRIDES.get(name, ""), extra])))
    hp.jit_compile = jit
    return hp.freeze()


def make_env(hp: HParams):
    """The training vector env the in-process engine builds (seed 0)."""
    return make_vector_env(
        hp.env, hp.num_envs, 0, env_kwargs=hp.env_kwargs, max_episode_steps=hp.max_episode_steps
    )


def frame_skip(hp: HParams) -> int:
    """Emulator frames per env step (1 outside Atari)."""
    return int(hp.env_kwargs.get("frame_skip", 1))


def env_only(name: str, steps: int, repeats: int) -> tuple[float, float]:
    """(env steps/s, frames/s) with random actions."""
    hp = build(name, False)
    env, _ = make_env(hp)
    env.reset(seed=0)

    def run() -> None:
        for _ in range(steps):
            env.step(env.action_space.sample())

    seconds = median_seconds(run, repeats)
    env.close()
    rate = steps * hp.num_envs / seconds
    return rate, rate * frame_skip(hp)


def act_and_update(name: str, repeats: int, xla_repeats: int) -> dict[str, float]:
    """Seconds per acting call (TF kernels / XLA) and per update (jit_compile false / true)."""
    out: dict[str, float] = {}
    agents = {}
    for jit in COMPILERS:
        hp = build(name, jit)
        env, spec = make_env(hp)
        agent = build_agent(hp, spec, 0)
        driver = Driver(env, spec, agent)
        driver.reset(0)
        warm = max(getattr(hp, "learning_starts", 0) // hp.num_envs + 1, agent.steps_per_iteration)
        driver.collect(warm)
        agent.update()  # trace and compile
        agents[jit] = (hp, agent, driver, env)
    _, agent, driver, _ = agents[False]
    obs = tf.constant(driver.obs)  # the driver's own: resetting its env would break its replay
    for xla in COMPILERS:
        act = tf.function(lambda o, a=agent: a._act_with_info(o), jit_compile=xla)
        act(obs)
        out[f"act/{xla}"] = median_seconds(lambda f=act: [f(obs) for _ in range(50)], repeats) / 50
    samples: dict[bool, list[float]] = {jit: [] for jit in COMPILERS}
    for i in range(repeats):  # alternate the two learners: shared-CPU noise hits both alike
        for jit, (hp, agent, driver, _) in agents.items():
            if jit and i >= xla_repeats:
                continue
            calls = max(1, 64 // agent.steps_per_iteration)  # >= 64 vector steps of training
            seconds = 0.0
            for _ in range(calls):
                driver.collect(agent.steps_per_iteration)
                start = time.perf_counter()
                agent.update()
                seconds += time.perf_counter() - start
            samples[jit].append(calls * hp.train_every / seconds)
    for jit in COMPILERS:
        out[f"update/{jit}"] = statistics.median(samples[jit])
    for _, _, _, env in agents.values():
        env.close()
    return out


def whole_loop(name: str, jit: bool | str, steps: int, log_steps: int) -> float:
    """Agent steps/s of train.py between its first and last evaluation rows."""
    overrides = ",".join(
        filter(
            None,
            [
                SET_OVERRIDES.get(name, ""),
                LOOP_OVERRIDES,
                f"eval.every_steps={log_steps},train_steps={steps}",
                f"jit_compile={str(jit).lower()}",
            ],
        )
    )
    with tempfile.TemporaryDirectory() as out:
        cmd = [
            sys.executable, str(ROOT / "train.py"), "--hparams", name, "--output_dir", out,
            "--hparam_override", overrides,
        ]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"train.py failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        with open(Path(out) / "run_0" / "progress.csv", newline="") as f:
            rows = list(csv.DictReader(f))
    first, last = rows[0], rows[-1]
    return (int(last["env_steps"]) - int(first["env_steps"])) / (
        float(last["wall_seconds"]) - float(first["wall_seconds"])
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["ppo_breakout", "dqn_pong"])
    parser.add_argument("--parts", default="env,act,update,loop")
    parser.add_argument("--env_steps", type=int, default=500, help="vector steps, env only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--xla_repeats", type=int, default=None, help="update repeats with XLA on (slow on CNNs)"
    )
    parser.add_argument("--loop_steps", type=int, default=4096, help="train.py env steps")
    parser.add_argument(
        "--xla_loop_steps",
        type=int,
        default=None,
        help="train.py env steps with XLA on (0: skip that run)",
    )
    parser.add_argument("--log_steps", type=int, default=1024, help="steps between rows")
    args = parser.parse_args()
    parts = set(args.parts.split(","))

    tables = {}
    for name in args.sets:
        rows: list[tuple[str, str, str]] = []
        if "env" in parts:
            rate, frames = env_only(name, args.env_steps, args.repeats)
            print(
                f"\n{name}: env only (random actions): {rate:,.0f} env steps/s, "
                f"{frames:,.0f} frames/s"
            )
        if parts & {"act", "update"}:
            t = act_and_update(name, args.repeats, args.xla_repeats or args.repeats)
            if "act" in parts:
                act = [f"{t[f'act/{x}'] * 1e3:.2f}" for x in COMPILERS]
                rows.append(("act, one vector step (ms)", *act))
            if "update" in parts:
                update = [f"{t[f'update/{x}']:,.0f}" for x in COMPILERS]
                rows.append(("update (env steps/s it pays)", *update))
        if rows:  # the in-process parts now: a whole-loop run can take many minutes
            print(f"{name} act/update: {rows}", file=sys.stderr, flush=True)
        if "loop" in parts:
            rates = []
            for jit in COMPILERS:
                steps = args.xla_loop_steps if jit and args.xla_loop_steps is not None else None
                if steps == 0:  # skipped: an XLA CNN run on CPU takes ~1 minute per update
                    rates.append("skipped")
                    continue
                rate = whole_loop(name, jit, steps or args.loop_steps, args.log_steps)
                rates.append(f"{rate:,.1f}")
                print(f"{name} whole loop jit_compile={jit}: {rate:,.1f}", file=sys.stderr)
            auto = whole_loop(name, "auto", args.loop_steps, args.log_steps)
            rows.append(("whole loop (agent steps/s)", *rates))
            rows.append(("whole loop, jit_compile=auto", f"{auto:,.1f}", ""))
        print(f"{name} (median of {args.repeats}; whole loop: one run each)")
        print(f"| {'part':<30} | {'XLA off':>10} | {'XLA on':>10} |")
        print(f"|{'-' * 32}|{'-' * 12}|{'-' * 12}|")
        for part, off, on in rows:
            print(f"| {part:<30} | {off:>10} | {on:>10} |", flush=True)
        tables[name] = [{"part": part, "xla_off": off, "xla_on": on} for part, off, on in rows]
    tool_records.append("atari_throughput", vars(args), tables)


if __name__ == "__main__":
    main()
