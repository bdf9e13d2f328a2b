#!/usr/bin/env python3
"""A population of trials in one program vs the same trials one after another.

`python -m rl.tune --population N` trains N trials of a TF-ops set as ONE compiled program
(`rl.tune.population`, `rl.compiled.population`); `--population 1` runs them one by one as
`study.optimize` does. This runs both on the SAME trials (the same values, enqueued into each
study before its tuner starts), the same budget each (`--train_steps`, no early stop) and one
tuning seed, as `python -m rl.tune` subprocesses back to back, alternating which goes first;
medians over `--repeats`. It prints wall and CPU seconds (TF import included: one per
process, as a user pays it), the ratio, and how close the two modes' trial values are (the
members are the single runs up to float32 rounding, which RL then amplifies).

The XLA compile cache (rl/utils/compile_cache.py) is off by default (`--cache off`: every
program compiles, as in a first study). `--cache warm` first runs both modes untimed on OTHER
trials (values drawn with `--seed` + 1) into one cache, as an earlier study on this machine
would: a population's program reads its values from variables, so it is the same program for
new values and loads from the cache; a sequential trial's values are constants of its program,
so only the parts that do not read them (the greedy evaluation) load.

    .venv/bin/python -m benchmarks.tune                       # 32 ppo_tf_cartpole trials
    .venv/bin/python -m benchmarks.tune --trials 8 --repeats 1 --train_steps 10240
    .venv/bin/python -m benchmarks.tune --seed_shards 0       # population: one program/core
    .venv/bin/python -m benchmarks.tune --cache warm          # a second study on this machine

`--pbt` compares population-based training (`--pbt`) with random search on the SAME members
(the same initial values and seeds, rounds turned off by a `--pbt_interval` past the budget) and
the same env steps, on ppo_tf_cartpole and tf/Acrobot-v1, for `--study_seeds` seeds each; it
prints each study's winner's fresh-seed score (its values, or PBT's schedules, re-trained on 5
fresh seeds). docs/tuning.md, "Population-based training".

    .venv/bin/python -m benchmarks.tune --pbt                 # 2 tasks x 3 seeds x 2 modes

`--compile_only` times the population program's first call (trace + XLA compile, no cache)
and counts its graph's ops (nested functions included) for each `--sizes` member count, each
in a fresh process: the numbers behind docs/tuning.md, "Compile cost".

    .venv/bin/python -m benchmarks.tune --compile_only --sizes 1,8,32,128

`--population N` runs only `--population N`, with the compile cache on and empty (a first
study on this machine, the default), and prints each batch's seconds (from its first trial's
ask to its last trial's tell): the first batch traces, compiles and builds its program; later
batches of N trials reuse it (`rl.engines.compiled.ProgramCache`). docs/tuning.md, "Populations".

    .venv/bin/python -m benchmarks.tune --trials 32 --population 8
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEYS = "lr,clip_range,ent_coef,vf_coef,gamma,gae_lambda,max_grad_norm"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sample_trials(count: int, seed: int) -> list[dict]:
    """`count` value sets drawn at random from the `ppo` space's population keys."""
    import optuna

    import rl  # noqa: F401  (fills the registries)
    from rl import registry
    from rl.tune.objective import distributions, suggest

    space = registry.get_search_space("ppo").restricted(KEYS.split(","))
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    trials = []
    for _ in range(count):
        trial = study.ask(distributions(space))
        trials.append({param.key: suggest(trial, param) for param in space.params})
        study.tell(trial, 0.0)
    return trials


def tune(args: argparse.Namespace, trials: list[dict], population: int, cache: str) -> dict:
    """One `python -m rl.tune` process over the enqueued `trials`; times and trial values."""
    import optuna

    with tempfile.TemporaryDirectory() as out:
        name = f"{args.hparams}-ppo"
        study = optuna.create_study(
            study_name=name, storage=f"sqlite:///{out}/study.db", direction="maximize"
        )
        for values in trials:
            study.enqueue_trial(values)
        overrides = f"stop_at_eval_return=None,seed_shards={args.seed_shards}"
        cmd = [sys.executable, "-m", "rl.tune", "--hparams", args.hparams, "--space", "ppo",
               "--keys", KEYS, "--trials", str(len(trials)), "--population", str(population),
               "--seeds_per_trial", "1", "--pruner", "none", "--select", "False",
               "--train_steps", str(args.train_steps), "--last_k", "1",
               "--hparam_override", overrides, "--output_dir", out]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3",
               "CUDA_VISIBLE_DEVICES": "", "RL_XLA_CACHE": cache}  # fmt: skip
        cpu, start = children_cpu(), time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
        wall, cpu = time.perf_counter() - start, children_cpu() - cpu
        if proc.returncode != 0:
            raise SystemExit(f"rl.tune failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        done = optuna.load_study(study_name=name, storage=f"sqlite:///{out}/study.db")
        values = {json.dumps(t.params, sort_keys=True): t.value for t in done.trials}
        ordered = sorted(done.trials, key=lambda t: t.number)  # asked `population` at a time
        batches = [ordered[i : i + population] for i in range(0, len(ordered), population)]
        seconds = [
            (max(t.datetime_complete for t in b) - min(t.datetime_start for t in b)).total_seconds()
            for b in batches
        ]
    return {"wall": wall, "cpu": cpu, "values": values, "batch_seconds": seconds}


# PBT's tasks: (label, hparams set, protocol overrides, solved threshold); Acrobot is the
# harder TF-ops task (gymnasium's thresholds: CartPole-v1 475, Acrobot-v1 -100).
PBT_TASKS = (
    ("cartpole", "ppo_tf_cartpole", "stop_at_eval_return=None", 475.0),
    ("acrobot", "ppo_tf_cartpole", "env=tf/Acrobot-v1,max_episode_steps=500,"
     "stop_at_eval_return=None", -100.0),
)  # fmt: skip


def best_member(out: str, threshold: float) -> tuple[float, int | None]:
    """The final evaluation return of the population's best member (by that return) and the
    first env step at which that member's evaluation reached `threshold` (None: never)."""
    import csv

    best: tuple[float, int | None] = (float("-inf"), None)
    for progress in sorted(Path(out, "members").glob("member_*/progress.csv")):
        with progress.open() as f:
            rows = [r for r in csv.DictReader(f) if r.get("eval_return_mean")]
        curve = [(int(r["env_steps"]), float(r["eval_return_mean"])) for r in rows]
        reached = next((step for step, value in curve if value >= threshold), None)
        best = max(best, (curve[-1][1], reached), key=lambda pair: pair[0])
    return best


def pbt_vs_random(args: argparse.Namespace) -> None:
    """PBT and random search over the same members, same env steps; winners on fresh seeds."""
    rows = []
    for label, hparams, overrides, threshold in PBT_TASKS:
        for study_seed in range(args.study_seeds):
            for mode in ("pbt", "random"):
                # No round before the budget ends (a multiple of ppo_tf_cartpole's 10,240-step
                # evaluations past it): the same members, trained independently.
                past = 10240 * (args.pbt_steps // 10240 + 1)
                interval = ["--pbt_interval", str(past)] if mode == "random" else []
                with tempfile.TemporaryDirectory() as out:
                    cmd = [sys.executable, "-m", "rl.tune", "--hparams", hparams, "--space", "ppo",
                           "--keys", "lr,ent_coef,vf_coef", "--population",
                           str(args.members), "--pbt", *interval, "--seed", str(100 * study_seed),
                           "--train_steps", str(args.pbt_steps), "--hparam_override",
                           overrides, "--output_dir", out]  # fmt: skip
                    env = {**os.environ, "PYTHONPATH": str(ROOT), "CUDA_VISIBLE_DEVICES": ""}
                    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
                    if proc.returncode != 0:
                        raise SystemExit(f"rl.tune failed:\n{proc.stderr[-3000:]}")
                    winner = json.loads(Path(out, "winner.json").read_text())
                    final, reached = best_member(out, threshold)
                rows.append((label, study_seed, mode, final, reached, winner["fresh_mean"],
                             winner["fresh_std"]))  # fmt: skip
                print(json.dumps(rows[-1]), file=sys.stderr)
    print(f"== PBT vs random search: {args.members} members, {args.pbt_steps:,} env steps each")
    print("task      study   mode    best member: final return, steps to threshold | "
          "winner on 5 fresh seeds")  # fmt: skip
    for label, study_seed, mode, final, reached, mean, std in rows:
        steps = "never" if reached is None else f"{reached:,}"
        print(f"{label:<9} seed {study_seed}  {mode:<6}  {final:8.1f}  {steps:>9}  |  "
              f"{mean:8.1f} ± {std:.1f}")  # fmt: skip


def compile_seconds(args: argparse.Namespace, size: int) -> dict:
    """Builds a `size`-member population of `args.hparams` (random values) and times the build
    (its agents, eagerly), its first iteration call (trace + compile) and a second one; counts
    the traced graph's ops."""
    import tensorflow as tf

    from rl import registry
    from rl.compiled import CompiledPPOSeeds
    from rl.envs.tf import make_tf_env

    def hparams(**values):
        hp = registry.get_hparams(args.hparams)()
        for key, value in values.items():
            setattr(hp, key, value)
        hp.freeze()
        return hp

    base = hparams()
    members = [hparams(**values) for values in sample_trials(size, args.seed)]
    env = make_tf_env(base.env, max_episode_steps=base.max_episode_steps)
    start = time.perf_counter()
    joint = CompiledPPOSeeds(base, env, list(range(size)), members)
    build, start = time.perf_counter() - start, time.perf_counter()
    graph = joint.iteration.get_concrete_function().graph.as_graph_def()
    trace = time.perf_counter() - start
    ops = len(graph.node) + sum(len(f.node_def) for f in graph.library.function)
    joint.run_iteration()
    first = time.perf_counter() - start
    start = time.perf_counter()
    joint.run_iteration()
    return {"members": size, "build_s": build, "trace_s": trace, "first_call_s": first,
            "next_call_s": time.perf_counter() - start, "ops": ops,
            "tf_version": tf.__version__}  # fmt: skip


def compile_table(args: argparse.Namespace) -> None:
    """`compile_seconds` for each size in a fresh process (no cache, no earlier traces)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3",
           "CUDA_VISIBLE_DEVICES": "", "RL_XLA_CACHE": "off"}  # fmt: skip
    print(f"== {args.hparams}: a population's first iteration call, {os.cpu_count()} cores")
    print(f"{'members':>7} | {'build s':>7} {'trace s':>7} {'first call s':>12} "
          f"{'next call s':>11} {'first - next':>12} | {'ops':>7}")  # fmt: skip
    for size in [int(n) for n in args.sizes.split(",")]:
        cmd = [sys.executable, "-m", "benchmarks.tune", "--_measure", str(size)]
        cmd += ["--hparams", args.hparams]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
        if proc.returncode != 0:
            raise SystemExit(f"measuring {size} members failed:\n{proc.stderr[-3000:]}")
        r = json.loads(proc.stdout.splitlines()[-1])
        first, run = r["first_call_s"], r["next_call_s"]  # first - next: trace + compile
        print(f"{size:>7} | {r['build_s']:>7.1f} {r['trace_s']:>7.1f} {first:>12.1f} "
              f"{run:>11.2f} {first - run:>12.1f} | {r['ops']:>7}", flush=True)  # fmt: skip


def batch_seconds(args: argparse.Namespace, trials: list[dict]) -> None:
    """One study of `trials` with `--population N`, the cache empty: seconds per batch."""
    with tempfile.TemporaryDirectory(prefix="tune-bench-xla-") as cache:
        result = tune(args, trials, args.population, cache)
    seconds = result["batch_seconds"]
    print(f"== {args.trials} {args.hparams} trials, --population {args.population}, "
          f"{args.train_steps:,} env steps each, compile cache on (empty at start)")  # fmt: skip
    for number, value in enumerate(seconds):
        print(f"batch {number}: {value:6.1f} s")
    later = seconds[1:] or [float("nan")]
    print(f"first batch {seconds[0]:.1f} s, later batches {statistics.mean(later):.1f} s on "
          f"average; process wall {result['wall']:.1f} s, cpu {result['cpu']:.1f} s")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hparams", default="ppo_tf_cartpole")
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--train_steps", type=int, default=20480, help="env steps per trial")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="seed of the trials' values")
    parser.add_argument("--seed_shards", type=int, default=1, help="0: one program per core")
    parser.add_argument("--cache", choices=("off", "warm"), default="off")
    parser.add_argument("--pbt", action="store_true", help="PBT vs random search (docstring)")
    parser.add_argument("--members", type=int, default=8, help="--pbt: population size")
    parser.add_argument("--study_seeds", type=int, default=3, help="--pbt: studies per task")
    parser.add_argument("--pbt_steps", type=int, default=200_000, help="--pbt: env steps each")
    parser.add_argument("--compile_only", action="store_true", help="first-call seconds")
    parser.add_argument("--sizes", default="1,8,32,128", help="--compile_only: member counts")
    parser.add_argument("--population", type=int, default=0, help="N: seconds per batch")
    parser.add_argument("--_measure", type=int, help=argparse.SUPPRESS)  # one size, in-process
    args = parser.parse_args()
    if args._measure:
        print(json.dumps(compile_seconds(args, args._measure)))
        return
    if args.compile_only:
        compile_table(args)
        return
    if args.pbt:
        pbt_vs_random(args)
        return
    trials = sample_trials(args.trials, args.seed)
    if args.population:
        batch_seconds(args, trials)
        return
    modes = {"population": args.trials, "sequential": 1}
    cache = "off"
    if args.cache == "warm":
        cache = tempfile.mkdtemp(prefix="tune-bench-xla-")
        others = sample_trials(args.trials, args.seed + 1)
        for population in modes.values():
            tune(args, others, population, cache)  # untimed: an earlier study
    results: dict[str, list[dict]] = {mode: [] for mode in modes}
    for repeat in range(args.repeats):
        order = list(modes) if repeat % 2 == 0 else list(modes)[::-1]
        for mode in order:
            result = tune(args, trials, modes[mode], cache)
            results[mode].append(result)
            print(json.dumps({"repeat": repeat, "mode": mode, "wall": result["wall"],
                              "cpu": result["cpu"]}), file=sys.stderr)  # fmt: skip

    print(f"== {args.trials} {args.hparams} trials, {args.train_steps:,} env steps each, "
          f"seed_shards={args.seed_shards}, compile cache {args.cache}, median of "
          f"{args.repeats}")  # fmt: skip
    header = f"{'mode':<34} | {'wall s':>7} {'cpu s':>7} | {'median trial value':>18}"
    print(header)
    print("-" * len(header))
    medians = {}
    for mode, population in modes.items():
        rs = results[mode]
        medians[mode] = {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu")}
        value = statistics.median(v for v in rs[-1]["values"].values() if v is not None)
        label = f"{mode} (--population {population})"
        print(f"{label:<34} | {medians[mode]['wall']:>7.1f} {medians[mode]['cpu']:>7.1f} | "
              f"{value:>18.1f}")  # fmt: skip
    pop, seq = medians["population"], medians["sequential"]
    print(f"population is {seq['wall'] / pop['wall']:.2f}x faster (wall), "
          f"{seq['cpu'] / pop['cpu']:.2f}x less CPU")  # fmt: skip
    a, b = results["population"][-1]["values"], results["sequential"][-1]["values"]
    same = [key for key in a if a[key] is not None and a[key] == b.get(key)]
    diffs = sorted(abs(a[key] - b[key]) for key in a if a[key] is not None and b.get(key))
    print(f"trial values: {len(same)}/{len(a)} equal in both modes; median |difference| "
          f"{statistics.median(diffs) if diffs else float('nan'):.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
