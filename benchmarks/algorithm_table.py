#!/usr/bin/env python3
"""The algorithm table: our hparams sets beside Stable-Baselines3 on the same tasks and machine.

For every row (an hparams set, the SB3 algorithm it is compared with, an env and an env-step
budget) and every seed, runs `train.py` with early stop at the env's threshold and, right after
it, the SB3 peer (benchmarks/sb3_zoo_peers.py: rl-baselines3-zoo hyperparameters, in
.venv-peers, made by benchmarks/peers/setup.sh), one process at a time. Both sides use the
env's protocol, `PROTOCOL` in benchmarks/algorithm_rows.py (greedy evaluation of N episodes
every K env steps, stop at the first evaluation whose mean reaches the threshold). Every run
is appended as one JSON line to benchmarks/results/algorithm_table.jsonl (with the CPU, the
machine's load average, times, versions, commit), and a run already there is not repeated,
so the table fills in over several sessions. docs/benchmarks.md's tables are generated from
the records by `python -m benchmarks.pages`, which a run here calls at the end; `--status`
says which rows are missing, partial or stale (the set changed since its runs).
`MUJOCO_ROWS` (run only when named with --sets) train the whole budget instead, with no early
stop: final return and curves.

    nice -n 5 .venv/bin/python -m benchmarks.algorithm_table                  # everything
    nice -n 5 .venv/bin/python -m benchmarks.algorithm_table --sets dqn_acrobot ppo_acrobot
    .venv/bin/python -m benchmarks.algorithm_table --status                   # what is missing
    .venv/bin/python -m benchmarks.algorithm_table --runs                     # each cached run
    .venv/bin/python -m benchmarks.algorithm_table --sets td3_mountaincar_continuous \
        --budget td3_mountaincar_continuous=50000 --only ours --seeds 0

Wall seconds count from the start of the training loop (ours: tracing and XLA compilation
included) or of `model.learn()` (SB3), include evaluation, and stop at the evaluation that
reached the threshold. Two runs at once on a 2-core machine slow each other: the records' start
and end times show which runs overlapped (docs/benchmarks.md lists them).

The rows and the protocol are benchmarks/algorithm_rows.py's; the records and what is read from
them, benchmarks/algorithm_records.py's.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import platform
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import machine_info  # standard library only, like this module
from benchmarks.algorithm_records import (
    append_result,
    hparams_values,
    latest,
    load_results,
    needs_rerun,
    render_runs,
    render_status,
    wanted_key,
)
from benchmarks.algorithm_rows import ALL_ROWS, PROTOCOL, ROWS, SEEDS, Row, overrides

ROOT = Path(__file__).resolve().parents[1]
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"  # benchmarks/peers/setup.sh
PEERS_MODULE = "benchmarks.sb3_zoo_peers"  # run by .venv-peers with the repository on PYTHONPATH
PEERS_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


# ------------------------------------------------------------------------------ one run each


def first_at_threshold(history: list[dict[str, float]], threshold: float) -> dict | None:
    """The first evaluation whose mean reaches `threshold` (a full-budget run trains past it)."""
    return next((h for h in history if h["mean"] >= threshold), None)


def hparams_json(tree: Path, runs: list[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    """The frozen hparams JSON (what train.py writes as hparams.json) per (set, override),
    computed in `tree` by one subprocess; None for a set that no longer builds."""
    script = (
        "import json, sys\n"
        "import rl.hparams\n"
        "from rl import registry\n"
        "out = {}\n"
        "for name, override in json.loads(sys.argv[1]):\n"
        "    try:\n"
        "        hp = registry.get_hparams(name)()\n"
        "        hp.override(override)\n"
        "        hp.freeze()\n"
        "        out[name + '|' + override] = hp.to_json()\n"
        "    except Exception:\n"
        "        out[name + '|' + override] = None\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, json.dumps(runs)],
        cwd=tree,
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    if proc.returncode != 0:
        raise SystemExit(f"building hparams in {tree} failed:\n{proc.stderr[-3000:]}")
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    return {tuple(k.split("|", 1)): v for k, v in found.items()}


# ------------------------------------------------------------------------------ the code we run
# Other engineers edit the shared working tree while benchmarks run, so our side runs a clean
# copy of the committed tree (`git archive HEAD`) plus these files from the working tree (the
# sets this table needs that are not committed yet); every record names the commit and the
# overlaid files' hashes. Overlaid rl/hparams modules are added to the snapshot's registration
# import when HEAD's rl/hparams/__init__.py does not import them yet.
OVERLAY = (
    "rl/hparams/acrobot.py",
    "rl/hparams/lunarlander.py",
    "rl/hparams/mountaincar_continuous.py",
)


def _git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return proc.stdout


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _register_hparams_modules(tree: Path, modules: list[str]) -> None:
    init = tree / "rl" / "hparams" / "__init__.py"
    text = init.read_text()
    head, sep, rest = text.partition("from rl.hparams import (  # noqa: F401\n")
    body, close, tail = rest.partition(")\n")
    names = {line.strip().rstrip(",") for line in body.splitlines() if line.strip()}
    names.update(modules)
    body = "".join(f"    {name},\n" for name in sorted(names))
    init.write_text(head + sep + body + close + tail)


def snapshot_tree() -> tuple[Path, dict[str, Any]]:
    """The committed tree plus OVERLAY, unpacked once under the temp dir (module comment)."""
    commit = _git("rev-parse", "HEAD").strip()
    overlay = {
        path: _file_hash(ROOT / path)
        for path in OVERLAY
        if (ROOT / path).exists()
        and _git("ls-files", "-m", "-o", "--exclude-standard", "--", path).strip()
    }
    ident = hashlib.sha256(json.dumps([commit, overlay], sort_keys=True).encode()).hexdigest()
    tree = Path(tempfile.gettempdir()) / f"algorithm_table_tree_{ident[:12]}"
    if not tree.exists():
        partial = Path(tempfile.mkdtemp(prefix="algorithm_table_tree_partial_"))
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(partial)], input=archive.stdout, check=True)
        for path in overlay:
            (partial / path).parent.mkdir(parents=True, exist_ok=True)
            (partial / path).write_bytes((ROOT / path).read_bytes())
        modules = [
            Path(p).stem for p in OVERLAY if p.startswith("rl/hparams/") and (partial / p).exists()
        ]
        _register_hparams_modules(partial, modules)
        try:
            partial.rename(tree)
        except OSError:  # a runner started beside this one unpacked the same tree first
            if not tree.exists():
                raise
            shutil.rmtree(partial)
    return tree, {"commit": commit, "overlay": overlay}


def machine() -> dict[str, Any]:
    return {
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def timed_subprocess(
    cmd: list[str], timeout: float, env: dict[str, str] | None = None, cwd: Path | None = None
) -> dict:
    """Runs `cmd`; returns its output, wall seconds and the CPU seconds of the child processes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd
        )
        status, stdout, stderr, rc = "ok", proc.stdout, proc.stderr, proc.returncode
        if rc != 0:
            status = "failed"
    except subprocess.TimeoutExpired as e:
        status, rc = "timeout", None
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "status": status,
        "returncode": rc,
        "stdout": stdout,
        "stderr": stderr,
        "process_seconds": round(time.monotonic() - start, 2),
        "cpu_seconds": round(cpu, 2),
    }


def eval_history(progress_csv: Path) -> list[dict[str, float]]:
    history = []
    with progress_csv.open() as f:
        for line in csv.DictReader(f):
            if line.get("eval_return_mean"):
                history.append(
                    {
                        "step": int(line["env_steps"]),
                        "mean": float(line["eval_return_mean"]),
                        "std": float(line["eval_return_std"]),
                        "wall": float(line["wall_seconds"]),
                    }
                )
    return history


def run_ours(
    row: Row, seed: int, budget: int, timeout: float, tree: Path, tree_info: dict
) -> dict[str, Any]:
    override = overrides(row.env, budget, row.full_budget)
    record: dict[str, Any] = {
        "side": "ours",
        "set": row.set,
        "env": row.env,
        "seed": seed,
        "budget": budget,
        "protocol": PROTOCOL[row.env],
        "hparams_override": override,
        "tree": tree_info,
        "machine": machine_info.cpu(),
    }
    with tempfile.TemporaryDirectory(prefix="algorithm_table_") as out:
        cmd = [sys.executable, str(tree / "train.py"), "--hparams", row.set, "--seed", str(seed)]
        cmd += ["--output_dir", out, "--hparam_override", override]
        shown = ["train.py", "--hparams", row.set, "--seed", str(seed), "--output_dir", "DIR"]
        record["command"] = shlex.join([*shown, "--hparam_override", override])
        record["machine_before"] = machine()
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        proc = timed_subprocess(cmd, timeout, env, cwd=tree)
        record["machine_after"] = machine()
        record.update({k: proc[k] for k in ("status", "process_seconds", "cpu_seconds")})
        run = Path(out) / "run_0"
        if proc["status"] != "ok":
            record["error"] = proc["stderr"][-2000:]
            return record
        pointer = json.loads((run / "checkpoints" / "latest.json").read_text())
        state_file = run / "checkpoints" / pointer["directory"] / "trainer.json"
        state = json.loads(state_file.read_text())
        history = eval_history(run / "progress.csv")
        # what ran, compared with the set's current values when rendering
        ran = (run / "hparams.json").read_text()
    if row.full_budget:
        first = first_at_threshold(history, PROTOCOL[row.env]["threshold"])
        steps, wall = (first["step"], first["wall"]) if first else (None, None)
    else:
        steps, wall = state["first_step_at_threshold"], state["first_wall_at_threshold"]
    solved = steps is not None
    record.update(
        {
            "solved": solved,
            "env_steps_to_threshold": steps,
            "wall_seconds_to_threshold": round(wall, 2) if solved else None,
            "final_eval_mean": state["last_eval_return"],
            "env_steps_total": state["env_steps"],
            "wall_seconds_total": round(state["wall_seconds"], 2),
            "eval_history": history,
            "hparams_digest": hashlib.sha256(ran.encode()).hexdigest()[:16],
            "hparams_values": hparams_values(ran),
            "versions": versions_ours(),
        }
    )
    return record


def versions_ours() -> dict[str, str]:
    import importlib.metadata as md

    names = {"python": platform.python_version()}
    for package in ("tensorflow", "gymnasium", "numpy"):
        try:
            names[package] = md.version(package)
        except md.PackageNotFoundError:
            names[package] = "?"
    return names


def zoo_entry(algo: str, env: str) -> Any:
    proc = subprocess.run(
        [str(PEERS_PYTHON), "-m", PEERS_MODULE, "--print_zoo", algo, env],
        capture_output=True,
        text=True,
        env=PEERS_ENV,
    )
    if proc.returncode != 0:
        raise SystemExit(f"sb3_zoo_peers.py --print_zoo {algo} {env} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def run_sb3(row: Row, seed: int, budget: int, timeout: float) -> dict[str, Any]:
    cmd = [str(PEERS_PYTHON), "-m", PEERS_MODULE, "--algo", row.algo, "--env", row.env]
    cmd += ["--seed", str(seed), "--budget", str(budget), "--horizon", "zoo"]
    cmd += ["--no_stop"] if row.full_budget else []
    record: dict[str, Any] = {
        "side": "sb3",
        "set": row.set,
        "algo": row.algo,
        "env": row.env,
        "seed": seed,
        "budget": budget,
        "protocol": PROTOCOL[row.env],
        "zoo_entry": zoo_entry(row.algo, row.env),
        "command": shlex.join(["sb3_zoo_peers.py", *cmd[3:]]),
        "machine": machine_info.cpu(),
        "machine_before": machine(),
    }
    # a scratch cwd: mujoco writes its deprecation warnings to ./MUJOCO_LOG.TXT
    with tempfile.TemporaryDirectory(prefix="algorithm_table_sb3_") as scratch:
        proc = timed_subprocess(cmd, timeout, env=PEERS_ENV, cwd=Path(scratch))
    record["machine_after"] = machine()
    record.update({k: proc[k] for k in ("status", "process_seconds", "cpu_seconds")})
    if proc["status"] != "ok":
        record["error"] = proc["stderr"][-2000:]
        return record
    line = json.loads(proc["stdout"].strip().splitlines()[-1])
    if line["eval_protocol"] != PROTOCOL[row.env]:
        raise SystemExit(f"SB3 ran protocol {line['eval_protocol']}, not {PROTOCOL[row.env]}")
    solved = bool(line["solved"])
    history = line["eval_history"] or []
    record.update(
        {
            "solved": solved,
            "env_steps_to_threshold": line["env_steps_to_solve"],
            "wall_seconds_to_threshold": line["wall_seconds_to_solve"],
            "final_eval_mean": line["final_eval_mean"],
            "env_steps_total": line["env_steps_total"],
            "wall_seconds_total": line["wall_seconds_total"],
            "eval_history": history,
            "sb3_record": {k: v for k, v in line.items() if k != "eval_history"},
            "versions": line["versions"],
        }
    )
    return record


# ------------------------------------------------------------------------------ the cache


# ------------------------------------------------------------------------------ rendering


def current_values(
    rows: list[Row], budgets: dict[str, int], tree: Path
) -> dict[str, dict[str, Any] | None]:
    runs = [(row.set, overrides(row.env, budgets[row.set], row.full_budget)) for row in rows]
    texts = hparams_json(tree, runs)
    return {
        name: (hparams_values(texts[(name, o)]) if texts[(name, o)] else None) for name, o in runs
    }


# ------------------------------------------------------------------------------ main


def parse_budgets(items: list[str]) -> dict[str, int]:
    budgets = {row.set: row.budget for row in ALL_ROWS}
    for item in items:
        name, _, value = item.partition("=")
        if name not in budgets or not value.isdigit():
            raise SystemExit(f"--budget {item!r}: expected SET=STEPS with SET one of {budgets}")
        budgets[name] = int(value)
    return budgets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [row.set for row in ALL_ROWS]
    default = [row.set for row in ROWS]  # MuJoCo rows (hours each) only when named
    parser.add_argument("--sets", nargs="+", choices=names, default=default, metavar="SET")
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument("--only", choices=("ours", "sb3"), help="run one side only")
    parser.add_argument(
        "--status", action="store_true", help="no runs: which rows are missing, partial, stale"
    )
    parser.add_argument("--runs", action="store_true", help="print each cached run, no runs")
    parser.add_argument(
        "--budget", nargs="*", default=[], metavar="SET=STEPS", help="env-step budget overrides"
    )
    parser.add_argument(
        "--timeout", type=float, help="seconds per run (default 3,600; MuJoCo rows 12,000)"
    )
    parser.add_argument("--rerun", action="store_true", help="run again even if cached")
    parser.add_argument(
        "--no-render", action="store_true", help="leave docs/benchmarks.md alone after the runs"
    )
    args = parser.parse_args()
    budgets = parse_budgets(args.budget)
    rows = [row for row in ALL_ROWS if row.set in args.sets]
    if args.runs:
        print(
            render_runs(
                [r for r in rows if not r.full_budget], args.seeds, budgets, load_results()
            ),
            end="",
        )
        return

    tree, tree_info = snapshot_tree()
    print(f"[algorithm_table] our side runs {tree} ({tree_info})", flush=True)
    if not args.status:
        sides = [args.only] if args.only else ["ours", "sb3"]
        current = current_values(rows, budgets, tree)
        for row in rows:
            for seed in args.seeds:
                for side in sides:
                    budget = budgets[row.set]
                    cached = latest(load_results()).get(wanted_key(side, row, seed, budget))
                    if cached is not None and not args.rerun:
                        if not needs_rerun(cached, current.get(row.set)):
                            continue
                    print(f"[algorithm_table] {side} {row.set} seed {seed} ...", flush=True)
                    timeout = args.timeout or (12_000 if row.full_budget else 3600)
                    if side == "ours":
                        record = run_ours(row, seed, budget, timeout, tree, tree_info)
                    else:
                        record = run_sb3(row, seed, budget, timeout)
                    append_result(record)
                    steps = record.get("env_steps_to_threshold")
                    print(
                        f"[algorithm_table] {side} {row.set} seed {seed}: {record['status']}, "
                        f"solved={record.get('solved')} steps={steps} "
                        f"wall={record.get('wall_seconds_to_threshold')} "
                        f"final={record.get('final_eval_mean')} "
                        f"load={record['machine_after']['loadavg']}",
                        flush=True,
                    )
    if args.status:  # every row, run or not, with the stale ones named
        current = current_values(list(ALL_ROWS), budgets, tree)
        print(render_status(list(ALL_ROWS), args.seeds, budgets, load_results(), current), end="")
    elif not args.no_render:
        subprocess.run([sys.executable, "-m", "benchmarks.pages"], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
