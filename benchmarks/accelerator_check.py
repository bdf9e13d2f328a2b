#!/usr/bin/env python3
"""One command for a machine with a GPU or TPU: does `rl` run there, and how fast.

Prints one table per part and writes every figure to --json (default
benchmarks/results/accelerator_check.json; with --smoke, runs/accelerator_check_smoke.json, which
git ignores; both under the checkout, wherever the command runs from):

1. devices: what TensorFlow sees (and its CUDA build), and the device the checks ran on;
2. engines: a tiny run of each engine -- in-process (dqn_tiny), compiled (ppo_tf_tiny), Ape-X
   (dqn_tiny with 2 actor workers) and IMPALA (impala_tiny with 2 actors) -- trained through
   `train.main`, then resumed to twice its steps from its checkpoint;
3. compiled PPO on CartPole (`ppo_tf_cartpole`, one XLA program per iteration) with 1, 64,
   1,024 and 8,192 envs: env steps/s and the first call's trace + compile seconds. Each size
   keeps 32 steps per env and 4 minibatches per epoch, so the program's shape, not its
   length, grows with the envs;
4. `ppo_breakout` agent steps/s (collect + update, Python ALE envs), float32 against
   `mixed_bfloat16`, and the share of that time spent in TensorFlow rather than in the envs;
5. learner gradient steps/s of `dqn_cartpole` and `sac_pendulum` (`agent.update()`, replay
   filled by acting);
6. the compiler per model kind: `agent.update()` with XLA and with TF's kernels for an MLP
   (dqn_cartpole), the Nature CNN (dqn_pong, 8 gradient steps in the learner's graph loop) and
   a recurrent cell (drqn_masked_cartpole) -- the measurement behind `jit_compile=auto`
   (rl/utils/compiler.py), whose GPU half had never been measured;
7. peak memory: the device's (GPU) or, on CPU, the process's maximum resident set.

Timings are medians of --repeats calls after one untimed call. The whole check is sized to
finish in about 6 minutes on one H100/H200. `--smoke` runs every part with the tiny sets and
small sizes on CPU in seconds, so the script cannot rot between device runs
(tests/test_accelerator_check.py runs it in the default test tier).

    .venv/bin/python -m benchmarks.accelerator_check
    .venv/bin/python -m benchmarks.accelerator_check --smoke
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import resource
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "results" / "accelerator_check.json"
SMOKE_RECORD = ROOT / "runs" / "accelerator_check_smoke.json"  # a check that the script runs

import tensorflow as tf  # noqa: E402

import rl  # noqa: E402,F401
import train  # noqa: E402
from benchmarks.timing import median_seconds  # noqa: E402
from rl import registry  # noqa: E402
from rl.agents.build import build_agent  # noqa: E402
from rl.compiled import CompiledPPO  # noqa: E402
from rl.envs import make_vector_env  # noqa: E402
from rl.envs.tf import make_tf_env  # noqa: E402
from rl.hparams import HParams  # noqa: E402
from rl.rollout.driver import Driver  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Sizes:
    """What each part runs: the registered sets on an accelerator, tiny ones for --smoke."""

    engines: tuple[tuple[str, str, tuple[str, ...]], ...]  # (engine, set, extra train.py args)
    compiled_set: str
    compiled_envs: tuple[int, ...]
    ppo_set: str
    learner_sets: tuple[str, ...]
    model_kinds: tuple[tuple[str, str, str], ...]  # (kind, set, extra overrides)
    repeats: int


ENGINES = (
    ("in-process", "dqn_tiny", ()),
    ("compiled", "ppo_tf_tiny", ()),
    ("Ape-X", "dqn_tiny", ("--num_workers", "2")),
    ("IMPALA", "impala_tiny", ("--num_workers", "2")),
)
FULL = Sizes(
    engines=ENGINES,
    compiled_set="ppo_tf_cartpole",
    compiled_envs=(1, 64, 1024, 8192),
    ppo_set="ppo_breakout",
    learner_sets=("dqn_cartpole", "sac_pendulum"),
    model_kinds=(
        ("MLP", "dqn_cartpole", ""),
        ("CNN", "dqn_pong", "gradient_steps=8,train_every=32"),
        ("recurrent", "drqn_masked_cartpole", ""),
    ),
    repeats=5,
)
SMOKE = Sizes(
    engines=ENGINES,
    compiled_set="ppo_tf_tiny",
    compiled_envs=(1, 4),
    ppo_set="ppo_atari_tiny",
    learner_sets=("dqn_tiny", "sac_tiny"),
    model_kinds=(
        ("MLP", "dqn_tiny", ""),
        ("CNN", "dqn_atari_tiny", ""),
        ("recurrent", "drqn_tiny", ""),
    ),
    repeats=1,
)
PRECISIONS = ("float32", "mixed_bfloat16")
PARTS = [
    "devices",
    "engines",
    "compiled_ppo",
    "ppo_agent",
    "learners",
    "model_kinds",
    "peak_memory",
]


def hparams(name: str, overrides: str = "") -> HParams:
    hp = registry.get_hparams(name)()
    if overrides:
        hp.override(overrides)
    hp.freeze()
    return hp


def device_facts() -> dict:
    """The devices TensorFlow sees and what this TensorFlow was built for."""
    build = tf.sysconfig.get_build_info()
    facts = {
        "tensorflow": tf.__version__,
        "cuda_build": build.get("cuda_version"),
        "cudnn_build": build.get("cudnn_version"),
        "devices": [device.name for device in tf.config.list_logical_devices()],
    }
    for gpu in tf.config.list_physical_devices("GPU"):
        details = tf.config.experimental.get_device_details(gpu)
        facts.setdefault("gpu_names", []).append(details.get("device_name", gpu.name))
    facts["accelerator"] = accelerator()
    return facts


def accelerator() -> str:
    """ "GPU:0", "TPU:0" or "CPU:0": where TensorFlow places ops by default."""
    for kind in ("TPU", "GPU"):
        if tf.config.list_logical_devices(kind):
            return f"{kind}:0"
    return "CPU:0"


def latest_step(output_dir: Path) -> int:
    pointer = output_dir / "run_0" / "checkpoints" / "latest.json"
    return int(json.loads(pointer.read_text())["step"])


def engine_run(engine: str, name: str, extra: tuple[str, ...], root: Path) -> dict:
    """Trains `name` through train.main, then resumes it to twice its steps from the checkpoint."""
    out = root / f"{engine}-{name}"
    steps = registry.get_hparams(name)().train_steps
    base = ["--hparams", name, "--output_dir", str(out), *extra]
    seconds, statuses, steps_seen = [], [], []
    for train_steps in (steps, 2 * steps):
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            statuses.append(train.main([*base, "--train_steps", str(train_steps)]))
        seconds.append(time.perf_counter() - start)
        steps_seen.append(latest_step(out) if statuses[-1] == 0 else None)
    ok = statuses == [0, 0] and steps_seen == [steps, 2 * steps]
    return {
        "engine": engine,
        "set": name,
        "ok": ok,
        "exit": statuses,
        "checkpoint_steps": steps_seen,
        "train_s": seconds[0],
        "resume_s": seconds[1],
    }


def compiled_ppo(name: str, num_envs: int, repeats: int) -> dict:
    """Env steps/s of one compiled PPO iteration with `num_envs` envs (32 steps each, 4
    minibatches per epoch), and the first call's trace + compile + run seconds."""
    steps_per_env = min(32, registry.get_hparams(name)().train_every)
    batch = max(num_envs * steps_per_env // 4, 1)
    hp = hparams(
        name, f"num_envs={num_envs},train_every={num_envs * steps_per_env},batch_size={batch}"
    )
    env = make_tf_env(hp.env, max_episode_steps=hp.max_episode_steps, **hp.env_kwargs)
    ppo = CompiledPPO(hp, env, seed=0)
    start = time.perf_counter()
    ppo.run_iteration()
    first = time.perf_counter() - start
    seconds = median_seconds(ppo.run_iteration, repeats)
    return {
        "num_envs": num_envs,
        "steps_per_iteration": ppo.steps_per_iteration,
        "first_call_s": first,
        "iteration_s": seconds,
        "env_steps_per_s": ppo.steps_per_iteration / seconds,
    }


def agent_and_driver(hp: HParams) -> tuple:
    env, spec = make_vector_env(
        hp.env, hp.num_envs, 0, env_kwargs=hp.env_kwargs, max_episode_steps=hp.max_episode_steps
    )
    agent = build_agent(hp, spec, 0)
    driver = Driver(env, spec, agent)
    driver.reset(0)
    return env, agent, driver


def has_precision() -> bool:
    return "precision" in registry.get_hparams("dqn_tiny")().flat()


def ppo_agent_steps(name: str, precision: str, repeats: int) -> dict:
    """Agent steps/s of PPO iterations (collect `train_every` steps, then update) and the share
    of an iteration spent in TensorFlow (acting + update) rather than stepping the envs."""
    if precision != "float32" and not has_precision():
        return {"precision": precision, "skipped": "this tree has no `precision` hparam"}
    hp = hparams(name, "" if precision == "float32" else f"precision={precision}")
    env, agent, driver = agent_and_driver(hp)
    vector_steps = hp.train_every // hp.num_envs

    def iteration() -> None:
        driver.collect(vector_steps)
        agent.update()

    def env_only() -> None:
        for _ in range(vector_steps):
            env.step(env.action_space.sample())

    iteration()  # traces and compiles
    seconds = median_seconds(iteration, repeats)
    env_seconds = median_seconds(env_only, repeats)
    env.close()
    return {
        "precision": precision,
        "agent_steps_per_s": hp.train_every / seconds,
        "iteration_s": seconds,
        "share_in_tf": max(0.0, 1.0 - env_seconds / seconds),
    }


def learner_rate(name: str, repeats: int, overrides: str = "") -> dict:
    """Gradient steps/s of `agent.update()` (K gradient steps in one compiled call) on a
    replay filled by acting; `learning_starts` is capped so that filling takes seconds."""
    base = registry.get_hparams(name)()
    fill = min(base.learning_starts, 1000)
    hp = hparams(name, ",".join(filter(None, [f"learning_starts={fill}", overrides])))
    env, agent, driver = agent_and_driver(hp)
    driver.collect(fill // hp.num_envs + max(hp.train_every // hp.num_envs, 1))
    agent.env_steps.assign(fill)
    agent.update()  # traces and compiles
    seconds = median_seconds(agent.update, repeats)
    env.close()
    k = hp.gradient_steps
    return {
        "set": name,
        "gradient_steps_per_update": k,
        "update_s": seconds,
        "gradient_steps_per_s": k / seconds,
        "compiler": agent.compiler.describe(),
    }


def peak_memory_mb() -> dict:
    """The device's peak allocation where TensorFlow tracks one (GPU), else the process's."""
    device = accelerator()
    if not device.startswith("CPU"):
        with contextlib.suppress(ValueError):
            return {
                "where": device,
                "peak_mb": tf.config.experimental.get_memory_info(device)["peak"] / 2**20,
            }
    return {
        "where": "process max RSS",
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_part(results: dict, part: str, fn: Callable[[], object]) -> None:
    """Runs one part; a failure is recorded (and fails the check) without stopping the rest."""
    start = time.perf_counter()
    try:
        results[part] = fn()
    except Exception:  # noqa: BLE001 -- every part reports, whatever broke in one
        results.setdefault("errors", {})[part] = traceback.format_exc(limit=8)
    results.setdefault("part_seconds", {})[part] = time.perf_counter() - start
    print(f"[{part}] {results['part_seconds'][part]:.1f} s", file=sys.stderr, flush=True)


def engine_line(row: dict) -> str:
    ok = "yes" if row["ok"] else f"NO {row['exit']} {row['checkpoint_steps']}"
    seconds = f"{row['train_s']:>8.1f} {row['resume_s']:>9.1f}"
    return f"{row['engine']:<11} {row['set']:<13} {ok:>14} {seconds}"


def precision_line(row: dict) -> str:
    if "skipped" in row:
        return f"{row['precision']:<22} skipped: {row['skipped']}"
    return f"{row['precision']:<22} {row['agent_steps_per_s']:>13,.0f} {row['share_in_tf']:>12.0%}"


TABLES = (  # (part, header, one row's line)
    ("engines", f"{'engine':<11} {'set':<13} {'trains+resumes':>14} {'train s':>8} {'resume s':>9}",
     engine_line),
    ("compiled_ppo", f"{'compiled PPO envs':>17} {'env steps/s':>12} {'iteration ms':>13} "
     f"{'first call s':>13}",
     lambda r: f"{r['num_envs']:>17,} {r['env_steps_per_s']:>12,.0f} "
     f"{r['iteration_s'] * 1e3:>13.1f} {r['first_call_s']:>13.1f}"),
    ("ppo_agent", f"{'PPO (Atari) precision':<22} {'agent steps/s':>13} {'share in TF':>12}",
     precision_line),
    ("learners", f"{'learner':<22} {'grad steps/s':>12} {'K':>4}  compiler",
     lambda r: f"{r['set']:<22} {r['gradient_steps_per_s']:>12,.0f} "
     f"{r['gradient_steps_per_update']:>4}  {r['compiler']}"),
    ("model_kinds", f"{'model kind':<10} {'set':<22} {'XLA ms/step':>12} {'TF ms/step':>11} "
     f"{'XLA speedup':>12}",
     lambda r: f"{r['kind']:<10} {r['set']:<22} {r['xla_ms_per_step']:>12.2f} "
     f"{r['tf_ms_per_step']:>11.2f} {r['xla_speedup']:>11.2f}x"),
)  # fmt: skip


def print_tables(results: dict) -> None:
    """One table per part that ran, then each failed part's traceback."""
    facts = results.get("devices")
    if facts:
        print(f"== devices: {', '.join(facts['devices'])} (ran on {facts['accelerator']}; "
              f"TF {facts['tensorflow']}, CUDA build {facts['cuda_build']}; "
              f"{', '.join(facts.get('gpu_names', [])) or 'no GPU'})")  # fmt: skip
    for part, header, line in TABLES:
        if results.get(part):
            print(f"\n{header}")
            for row in results[part]:
                print(line(row))
    memory = results.get("peak_memory")
    if memory:
        print(f"\npeak memory ({memory['where']}): {memory['peak_mb']:,.0f} MB")
    for part, error in results.get("errors", {}).items():
        print(f"\nFAILED part {part}:\n{error}")


def model_kind(kind: str, name: str, overrides: str, repeats: int) -> dict:
    xla, tf_kernels = (
        learner_rate(name, repeats, ",".join(filter(None, [overrides, f"jit_compile={jit}"])))
        for jit in ("true", "false")
    )
    k = xla["gradient_steps_per_update"]
    return {
        "kind": kind,
        "set": name,
        "xla_ms_per_step": xla["update_s"] / k * 1e3,
        "tf_ms_per_step": tf_kernels["update_s"] / k * 1e3,
        "xla_speedup": tf_kernels["update_s"] / xla["update_s"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sets, small sizes (CPU, seconds)"
    )
    parser.add_argument("--json", type=Path, help="where to write figures (default: see above)")
    parser.add_argument("--repeats", type=int, help="timed calls per figure (median)")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=PARTS, help="which parts")
    parser.add_argument(
        "--engines",
        nargs="+",
        choices=[e[0] for e in ENGINES],
        default=[e[0] for e in ENGINES],
        help="which engines the engines part runs",
    )
    args = parser.parse_args(argv)
    sizes = SMOKE if args.smoke else FULL
    repeats = args.repeats or sizes.repeats
    engines = [row for row in sizes.engines if row[0] in args.engines]
    parts = {
        "devices": device_facts,
        "engines": lambda: [engine_run(*row, Path(root)) for row in engines],
        "compiled_ppo": lambda: [
            compiled_ppo(sizes.compiled_set, n, repeats) for n in sizes.compiled_envs
        ],
        "ppo_agent": lambda: [ppo_agent_steps(sizes.ppo_set, p, repeats) for p in PRECISIONS],
        "learners": lambda: [learner_rate(name, repeats) for name in sizes.learner_sets],
        "model_kinds": lambda: [model_kind(*row, repeats) for row in sizes.model_kinds],
        "peak_memory": peak_memory_mb,
    }

    results: dict = {"smoke": args.smoke}
    logger, level = tf.get_logger(), tf.get_logger().level
    logger.setLevel("ERROR")  # each part builds new agents: TF's retracing warnings are expected
    try:
        with tempfile.TemporaryDirectory(prefix="accelerator-check-") as root:
            for part in args.parts:
                run_part(results, part, parts[part])
    finally:
        logger.setLevel(level)
    out = args.json or (SMOKE_RECORD if args.smoke else RECORD)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print_tables(results)
    failed = bool(results.get("errors")) or not all(r["ok"] for r in results.get("engines", []))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
