#!/usr/bin/env python3
"""Learner steps per second under each strategy: one device vs MirroredStrategy over 2 logical
CPUs vs MultiWorkerMirroredStrategy over 2 local processes, on the same batch.

Per hparams set (gradient_steps=1, so one learner call is one gradient step) the agent's public
`learner_step(batch)` is compiled and timed (median of --repeats calls of --calls steps):

  default            one device, the learner XLA-compiled as the agent's `jit_compile` says
  mirrored           MirroredStrategy, 2 logical CPUs of this process, the learner as the agent
                     runs it under a strategy: each replica's loss and gradient XLA-compiled
                     where `jit_compile` says XLA (`rl.distribute.replica_xla`), the all-reduce
                     and the update on TF's kernels
  mirrored_tf        the same with jit_compile=False: every op on TF's kernels
  mirrored_whole_xla jit_compile=True around the whole replicated step: measured where TF
                     compiles it, else the error's first line is printed
  mwms               2 worker processes on 127.0.0.1 (TF_CONFIG), one CPU replica each, the
                     learner as in `mirrored`; the chief's median

On a CPU the replicas share the same cores, so a strategy only adds the all-reduce and the
split: expect it to be slower. The numbers say how much.

    .venv/bin/python -m benchmarks.strategies --hparams dqn_cartpole td3_pendulum
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from benchmarks import tool_records

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

ROOT = Path(__file__).resolve().parents[1]


def _measure(hparams_set: str, mode: str, calls: int, repeats: int) -> dict:
    """Steps/s of `mode` in this process (the strategy set up by the caller)."""
    import numpy as np
    import tensorflow as tf

    import rl  # noqa: F401
    from benchmarks.timing import median_seconds
    from rl import registry
    from rl.agents.build import build_agent
    from rl.envs import make_vector_env

    hp = registry.get_hparams(hparams_set)()
    hp.gradient_steps = 1
    if mode == "mirrored_tf":
        hp.jit_compile = False
    hp.freeze()
    env, spec = make_vector_env(hp.env, hp.num_envs, 0, env_kwargs=hp.env_kwargs)
    env.close()
    strategy = None
    if mode.startswith("mirrored"):
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    elif mode == "mwms":
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    agent = build_agent(hp, spec, 0, strategy)
    rng = np.random.default_rng(0)
    b = hp.batch_size
    action = (
        rng.integers(0, spec.num_actions, [1, b]).astype(np.int64)
        if spec.discrete
        else rng.uniform(spec.action_low, spec.action_high, [1, b, *spec.action_shape])
    ).astype(np.int64 if spec.discrete else np.float32)
    batch = {
        "obs": tf.constant(rng.normal(size=[1, b, *spec.obs_shape]).astype(np.float32)),
        "action": tf.constant(action),
        "reward": tf.constant(rng.normal(size=[1, b]).astype(np.float32)),
        "next_obs": tf.constant(rng.normal(size=[1, b, *spec.obs_shape]).astype(np.float32)),
        "discount": tf.constant(np.full([1, b], 0.99, np.float32)),
        "weights": tf.constant(np.ones([1, b], np.float32)),
    }
    jit = agent.compiler.learner if strategy is None else mode == "mirrored_whole_xla"
    step = tf.function(agent.learner_step, jit_compile=jit)
    if strategy is None or jit:
        compiled = "XLA" if jit else "TF kernels"
    else:
        compiled = "XLA per replica" if agent.compiler.learner else "TF kernels"

    def run() -> None:
        for _ in range(calls):
            out = step(batch)
        float(out["loss"])  # wait for the last step

    try:
        run()  # trace and compile
    except Exception as error:  # TF refusing to XLA-compile the replicated step: say why
        lines = [line for line in str(error).strip().splitlines() if "resource" in line]
        first = (lines or str(error).strip().splitlines() or [type(error).__name__])[0]
        return {"mode": mode, "error": first.strip()[:300]}
    seconds = median_seconds(run, repeats)
    return {"mode": mode, "steps_per_second": calls / seconds, "compiled": compiled}


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _mwms(hparams_set: str, calls: int, repeats: int) -> dict:
    workers = [f"127.0.0.1:{port}" for port in _free_ports(2)]
    procs = []
    for index in range(2):
        env = dict(os.environ)
        env["TF_CONFIG"] = json.dumps(
            {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        )
        env["CUDA_VISIBLE_DEVICES"] = ""
        command = [sys.executable, "-m", "benchmarks.strategies", "--worker", "mwms"]
        command += ["--hparams", hparams_set]
        command += ["--calls", str(calls), "--repeats", str(repeats)]
        procs.append(
            subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        )
    outputs = [proc.communicate(timeout=900)[0] for proc in procs]
    return json.loads(outputs[0].strip().splitlines()[-1])


def _in_subprocess(hparams_set: str, mode: str, calls: int, repeats: int) -> dict:
    """A fresh process per mode: 2 logical CPUs must be set before TF starts."""
    command = [sys.executable, "-m", "benchmarks.strategies", "--worker", mode]
    command += ["--hparams", hparams_set]
    command += ["--calls", str(calls), "--repeats", str(repeats)]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        return {"mode": mode, "error": (out.stderr.strip().splitlines() or ["?"])[-1][:300]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hparams", nargs="+", default=["dqn_cartpole", "td3_pendulum"])
    parser.add_argument("--calls", type=int, default=50, help="learner steps per timing")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # internal: one mode, JSON out
    args = parser.parse_args()
    if args.worker:
        import tensorflow as tf

        if args.worker.startswith("mirrored"):
            cpu = tf.config.list_physical_devices("CPU")[0]
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration()] * 2
            )
        print(json.dumps(_measure(args.hparams[0], args.worker, args.calls, args.repeats)))
        return
    print(f"{'hparams':<16} {'mode':<18} {'learner steps/s':>16}  note")
    by_set = {}
    for name in args.hparams:
        results = [
            _in_subprocess(name, mode, args.calls, args.repeats)
            for mode in ("default", "mirrored", "mirrored_tf", "mirrored_whole_xla")
        ]
        results.append(_mwms(name, args.calls, args.repeats))
        reference = results[0].get("steps_per_second")
        for r in results:
            if "error" in r:
                print(f"{name:<16} {r['mode']:<18} {'-':>16}  {r['error']}")
                continue
            ratio = f"{r['steps_per_second'] / reference:.2f}x default" if reference else ""
            note = f"{r['compiled']}, {ratio}"
            print(f"{name:<16} {r['mode']:<18} {r['steps_per_second']:>16.1f}  {note}")
        by_set[name] = results
    tool_records.append("strategies", vars(args), by_set)


if __name__ == "__main__":
    main()
