#!/usr/bin/env python3
"""Raw training throughput of the Python-env path against Stable-Baselines3, same settings.

Each measurement is one fresh process that trains for a fixed number of env steps with no
evaluation and no checkpoints, and reports env steps per wall second from the start of the
training loop (tracing and XLA compilation included, as SB3's `model.learn()` is timed from its
start). Ours and SB3 alternate, one process at a time, for --repeats rounds; the
table shows medians and the ratio ours / SB3.

Ours runs the real loop (`rl.loop.train` with the in-process engine: collect, update, logging
to TensorBoard/CSV/console) with evaluation and checkpoint writes switched off, so it is the
path `train.py` takes minus evaluation and checkpoints. SB3 runs
`benchmarks/peers/sb3_solve.py --throughput` in .venv-peers (benchmarks/peers/setup.sh;
rl-baselines3-zoo hyperparameters, 1 torch thread by default).

Equal settings. Our sets follow the zoo; the overrides below remove the remaining differences:
- PPO (`ppo_cartpole`): already the zoo's 8 envs x 32 steps, one 256-sample minibatch,
  20 epochs, separate 64-64 tanh policy and value nets, max_grad_norm 0.5, Adam eps 1e-5.
  train_steps 50176 = 196 rollouts of 256, the steps SB3 takes for --budget 50000.
- DQN (`dqn_cartpole`): the zoo uses 1 env (ours 2) and vanilla DQN targets (ours double-Q),
  Adam eps 1e-8 (torch's default); both overridden. 256-256 ReLU, batch 64, 128 gradient steps
  every 256 env steps from step 1024, epsilon 1 -> 0.04 over 8000 steps, target copied once per
  update (SB3 copies every 10 env steps while collecting, when the weights do not change: the
  same targets). train_steps 50176 = SB3's 196 rollouts of 256 steps.
- SAC (`sac_halfcheetah`, HalfCheetah-v5): the zoo's SB3 defaults (256-256 ReLU, batch 256,
  auto entropy), 10k uniform random steps first, then one gradient step per env step (ours: 64
  every 64, one compiled call), so --budget 20480 = 10,480 updates on both sides; learner-bound.

    .venv/bin/python benchmarks/python_path_vs_sb3.py                 # ppo, dqn: 3 rounds
    .venv/bin/python benchmarks/python_path_vs_sb3.py --algos sac --budget 20480
    .venv/bin/python benchmarks/python_path_vs_sb3.py --algos ppo --repeats 5
    .venv/bin/python benchmarks/python_path_vs_sb3.py --worker ppo    # one of ours, JSON line
    .venv/bin/python benchmarks/python_path_vs_sb3.py --cache warm    # compile cache warmed

`--cache warm` (rl/utils/compile_cache.py): one untimed run of ours with seed + 1 fills an XLA
compile cache first, which the timed runs then load from, as any earlier run of the set on
this machine would leave it; `--cache off` (default): every run compiles.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "benchmarks" / "peers" / "sb3_solve.py"
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"  # benchmarks/peers/setup.sh
# Both sets collect 256 env steps between updates; SB3 rounds its budget up to whole rollouts
# (--budget 50000 -> 196 x 256 = 50176 env steps), so ours trains that many too.
ROLLOUT = 256

# (our hparams set, overrides that make it equal to the SB3 zoo settings)
OURS = {
    "ppo": ("ppo_cartpole", ""),
    "dqn": ("dqn_cartpole", "num_envs=1,double_q=False,adam_epsilon=1e-8"),
    "sac": ("sac_halfcheetah", ""),
}
# The env per algo, and the peers script that has its zoo entry (sb3_zoo_peers.py adds MuJoCo).
ENV = {"ppo": "CartPole-v1", "dqn": "CartPole-v1", "sac": "HalfCheetah-v5"}
PEERS_FOR = {"sac": ROOT / "benchmarks" / "sb3_zoo_peers.py"}


def whole_rollouts(budget: int) -> int:
    return -(-budget // ROLLOUT) * ROLLOUT


def worker(algo: str, extra: str, seed: int, threads: int, budget: int = 50_000) -> dict:
    """Trains our set for `budget` (rounded up to whole rollouts) env steps in this process;
    returns the timing record."""
    import tensorflow as tf

    if threads:  # before any op runs
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    import numpy as np

    from rl.utils import compile_cache

    compile_cache.enable()  # RL_XLA_CACHE (set by main) decides: off, or the warm cache

    import rl  # noqa: F401
    from rl import loop, registry
    from rl.engines.in_process import InProcessEngine
    from rl.evaluation import EvalResult
    from rl.utils.checkpoint import CheckpointStore

    class ThroughputEngine(InProcessEngine):
        """The real engine; its evaluations play nothing and its checkpoints cut nothing.
        CPU seconds count from the loop's start (env and agent built)."""

        def start(self, states):
            cpu["start"] = time.process_time()
            super().start(states)

        def evaluate(self, requests):
            return [EvalResult(np.zeros(1), np.zeros(1, np.int64)) for _ in requests]

        def prepare_checkpoint(self, index, state):
            pass

        def checkpoint_written(self, index, state):
            pass

    CheckpointStore.save = lambda self, *args, **kwargs: ""  # no checkpoint writes either
    cpu: dict[str, float] = {}

    name, overrides = OURS[algo]
    hp = registry.get_hparams(name)()
    hp.override(",".join(x for x in (overrides, extra) if x))
    hp.train_steps = whole_rollouts(budget)
    hp.stop_at_eval_return = None
    hp.eval.episodes = 1  # the (unused) eval env is built anyway: keep it small
    hp.freeze()
    with tempfile.TemporaryDirectory() as out:
        devnull = open(os.devnull, "w")  # noqa: SIM115  (console progress lines)
        saved, sys.stdout = sys.stdout, devnull
        try:
            (result,) = loop.train(
                hp, [os.path.join(out, "run_0")], [seed], name,
                lambda runs: ThroughputEngine(hp, runs[0]),
            )  # fmt: skip
        finally:
            cpu["seconds"] = time.process_time() - cpu["start"]
            sys.stdout = saved
            devnull.close()
    return {
        "algo": algo,
        "hparams": name,
        "overrides": ",".join(x for x in (overrides, extra) if x),
        "env_steps": result.env_steps,
        "wall_seconds": round(result.wall_seconds, 3),
        "sps": round(result.env_steps / result.wall_seconds, 1),
        "cpu_seconds": round(cpu["seconds"], 3),
        "steps_per_cpu_second": round(result.env_steps / cpu["seconds"], 1),
    }


def run_ours(algo: str, extra: str, seed: int, threads: int, budget: int) -> dict:
    """One worker process (this checkout's `rl`, imported from its root)."""
    cmd = [sys.executable, "-m", "benchmarks.python_path_vs_sb3", "--worker", algo]
    cmd += ["--seed", str(seed)]
    cmd += ["--budget", str(budget)]
    cmd += ["--threads", str(threads)]
    if extra:
        cmd += ["--hparam_override", extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"worker failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# Runs sb3_solve.py unchanged, with `learn` wrapped to also report its CPU seconds (stderr).
SB3_CPU_WRAPPER = """
import json, runpy, sys, time
import stable_baselines3 as sb3
for cls in (sb3.PPO, sb3.DQN, sb3.SAC):
    def learn(self, *a, _orig=cls.learn, **k):
        start = time.process_time()
        try:
            return _orig(self, *a, **k)
        finally:
            cpu = time.process_time() - start
            print("LEARN_CPU " + json.dumps(cpu), file=sys.stderr, flush=True)
    cls.learn = learn
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run_sb3(algo: str, seed: int, threads: int, budget: int) -> dict:
    cmd = [
        str(PEERS_PYTHON), "-c", SB3_CPU_WRAPPER, str(PEERS_FOR.get(algo, PEERS)), "--algo",
        algo, "--env", ENV[algo], "--seed", str(seed), "--budget", str(budget),
        "--throughput", "--threads", str(threads),
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as cwd:  # MuJoCo writes MUJOCO_LOG.TXT where it runs
        env = {**os.environ, "PYTHONPATH": str(ROOT)}  # sb3_zoo_peers imports benchmarks.*
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"sb3_solve.py failed:\n{proc.stderr[-3000:]}")
    line = json.loads(proc.stdout.strip().splitlines()[-1])
    cpu = [float(x.split()[1]) for x in proc.stderr.splitlines() if x.startswith("LEARN_CPU ")]
    return {
        "env_steps": line["env_steps_total"],
        "wall_seconds": line["wall_seconds_total"],
        "sps": line["sps_overall"],
        "cpu_seconds": round(cpu[-1], 3),
        "steps_per_cpu_second": round(line["env_steps_total"] / cpu[-1], 1),
    }


def median_of(records: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algos", nargs="+", default=["ppo", "dqn"], choices=sorted(OURS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--budget", type=int, default=50_000, help="SB3's --budget; ours: whole rollouts above"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads for SB3 and TF intra/inter-op threads for ours (0: TF default)",
    )
    parser.add_argument("--hparam_override", default="", help="extra overrides for ours")
    parser.add_argument("--no_sb3", action="store_true", help="time ours only")
    parser.add_argument("--cache", choices=("off", "warm"), default="off")
    parser.add_argument(
        "--before",
        type=Path,
        help="another checkout (e.g. a `git worktree` of an older commit): its `rl` is timed "
        "too, in the same rounds, as the 'before' row",
    )
    parser.add_argument("--worker", choices=sorted(OURS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        record = worker(args.worker, args.hparam_override, args.seed, args.threads, args.budget)
        print(json.dumps(record), flush=True)
        return
    if not args.no_sb3 and not PEERS_PYTHON.exists():
        raise SystemExit(f"{PEERS_PYTHON} missing: run benchmarks/peers/setup.sh")

    os.environ["RL_XLA_CACHE"] = "off"
    if args.cache == "warm":
        os.environ["RL_XLA_CACHE"] = tempfile.mkdtemp(prefix="python-path-xla-")
    rows = []
    for algo in args.algos:
        if args.cache == "warm":  # untimed: fills the compile cache
            run_ours(algo, args.hparam_override, args.seed + 1, args.threads, args.budget)
        ours_runs, before_runs, sb3_runs = [], [], []
        for _ in range(args.repeats):
            ours_runs.append(
                run_ours(algo, args.hparam_override, args.seed, args.threads, args.budget)
            )
            print(json.dumps({"ours": ours_runs[-1]}), file=sys.stderr, flush=True)
            if args.before:
                before_runs.append(
                    run_ours(
                        algo,
                        args.hparam_override,
                        args.seed,
                        args.threads,
                        args.budget,
                        args.before,
                    )
                )
                print(json.dumps({"before": before_runs[-1]}), file=sys.stderr, flush=True)
            if not args.no_sb3:
                sb3_runs.append(run_sb3(algo, args.seed, max(args.threads, 1), args.budget))
                print(json.dumps({"sb3": sb3_runs[-1]}), file=sys.stderr, flush=True)
        rows.append((algo, ours_runs, sb3_runs))
        if before_runs:
            rows.append((f"{algo} (before: {args.before.name})", before_runs, sb3_runs))

    threads = f"{args.threads} thread(s)" if args.threads else "TF default threads"
    print(
        f"\nRaw training throughput, {whole_rollouts(args.budget)} env steps, "
        f"no eval, {threads}, compile cache {args.cache}, "
        f"median of {args.repeats} alternating rounds ({time.strftime('%Y-%m-%d')})\n"
    )
    print(
        "| algo | ours steps/s | SB3 steps/s | ratio | ours steps/CPU-s | SB3 steps/CPU-s "
        "| CPU ratio | ours wall s (rounds) | SB3 wall s (rounds) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for algo, ours_runs, sb3_runs in rows:
        ours_sps = median_of(ours_runs, "sps")
        ours_cpu = median_of(ours_runs, "steps_per_cpu_second")
        ours_walls = ", ".join(f"{r['wall_seconds']:.1f}" for r in ours_runs)
        if sb3_runs:
            sb3_sps = median_of(sb3_runs, "sps")
            sb3_cpu = median_of(sb3_runs, "steps_per_cpu_second")
            peer = (
                f"{sb3_sps:,.0f} | {ours_sps / sb3_sps:.2f}x | {ours_cpu:,.0f} | {sb3_cpu:,.0f} | "
                f"{ours_cpu / sb3_cpu:.2f}x"
            )
            sb3_walls = ", ".join(f"{r['wall_seconds']:.1f}" for r in sb3_runs)
        else:
            peer, sb3_walls = f"- | - | {ours_cpu:,.0f} | - | -", "-"
        print(f"| {algo} | {ours_sps:,.0f} | {peer} | {ours_walls} | {sb3_walls} |")
    for algo in args.algos:
        name, overrides = OURS[algo.split()[0]]
        extra = ",".join(x for x in (overrides, args.hparam_override) if x)
        print(f"\n{algo} on {ENV[algo.split()[0]]}: ours = `{name}`", end="")
        print(f" with `{extra}`" if extra else "", end="")
    print()


if __name__ == "__main__":
    main()
