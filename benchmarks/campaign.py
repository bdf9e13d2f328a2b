"""Runs a benchmark campaign's cells, each resumable after a kill, and records one JSON line per
finished cell; says where a campaign stands; and compares its two sides statistically.

    python -m benchmarks.campaign run mujoco_300k              # every cell not yet recorded
    python -m benchmarks.campaign run tiny --jobs 2 --only sb3 # two cells at once, SB3 only
    python -m benchmarks.campaign status mujoco_300k           # done / in progress / to do
    python -m benchmarks.campaign stats mujoco_300k            # IQM, intervals, verdicts

A campaign file (benchmarks/campaigns/NAME.toml, campaign_spec.py) declares cells: (entry, env,
seed, side), side `ours` (train.py with our hparams set, in .venv) or `sb3` (an rl-zoo3 entry,
benchmarks/peers/sb3_cell.py in .venv-peers, made by benchmarks/peers/setup.sh). Cells run one at
a time unless `--jobs N` says otherwise (recorded). A killed campaign continues where it was
when `run` is given again: a finished cell is never rerun, a cell in progress resumes from its
last checkpoint (ours: train.py's own resume; sb3: sb3_cell.py's), to the same result as a run
never stopped. A cell whose spec another campaign has recorded (the same key: the same env,
seed, budget, protocol and agent) reuses that record, copied with `reused_from` naming it.
Records go to benchmarks/results/campaigns/NAME.jsonl; the cells' working
folders (checkpoints, replay buffers, logs) to benchmarks/results/campaigns/NAME/, not committed,
or under `--work DIR`: a disk that outlives the checkout, so a cell can continue from a new one.

Each record: the cell and its spec, the evaluation curve, env steps, wall and process-tree CPU
seconds and peak memory summed or maxed over its attempts (each attempt listed), the load
average while it ran, the other cells running beside it, the CPU model and flags, package
versions and the git revision. `run` and `status` need the standard library only, so any venv
runs them; `stats` needs numpy (.venv has it).
"""

from __future__ import annotations

import argparse
import csv
import fcntl
import fnmatch
import json
import os
import shlex
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks import machine_info, process_meter
from benchmarks.campaign_spec import ROOT, Cell, load

RESULTS = ROOT / "benchmarks" / "results" / "campaigns"
OURS_PYTHON = ROOT / ".venv" / "bin" / "python"
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"


# ------------------------------------------------------------------------------ where things are
def cell_dir(results: Path, cell: Cell) -> Path:
    """A cell's working folder; named by its key, so a changed spec never resumes old state."""
    return results / cell.campaign / f"{cell.entry}-{cell.side}-seed{cell.seed}-{cell.key}"


def records_file(results: Path, campaign: str) -> Path:
    return results / f"{campaign}.jsonl"


def read_records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append_record(path: Path, record: dict[str, Any]) -> None:
    """One locked append: runners started beside each other may share the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(json.dumps(record, sort_keys=True) + "\n")


def done_keys(path: Path) -> set[str]:
    return {r["key"] for r in read_records(path) if r.get("status") == "ok"}


def recorded_elsewhere(results: Path, cell: Cell) -> dict[str, Any] | None:
    """The newest ok record of another campaign for exactly this cell's spec (its key), which
    this campaign can reuse instead of running it again (a factor campaign's SB3 side)."""
    found = [
        record
        for path in sorted(results.glob("*.jsonl"))
        if path.stem != cell.campaign
        for record in read_records(path)
        if record.get("status") == "ok" and record["key"] == cell.key
    ]
    return max(found, key=lambda r: r["time_utc"]) if found else None


def checkpoint_step(folder: Path, cell: Cell) -> int | None:
    """The env step of a cell's newest checkpoint, or None: how far a resume would start."""
    pointer = (
        folder / "run" / "run_0" / "checkpoints" / "latest.json"
        if cell.side == "ours"
        else folder / "sb3" / "checkpoints" / "latest.json"
    )
    try:
        return int(json.loads(pointer.read_text())["step"])
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return None


# ------------------------------------------------------------------------------ one cell
def hparams_tree_values(entries: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """hparams.json's tree -> {dotted key: value} (a nested set's keys dotted under its name)."""
    out: dict[str, Any] = {}
    for name, entry in entries.items():
        if entry["type"] == "hparams":
            out.update(hparams_tree_values(entry["value"], f"{prefix}{name}."))
        else:
            out[prefix + name] = entry["value"]
    return out


def shown(arg: str, work: Path) -> str:
    """A command's argument as a record shows it: paths in the checkout relative to it, a `--work`
    folder elsewhere as `WORK`, the venvs' interpreters as `python`."""
    if arg in (str(OURS_PYTHON), str(PEERS_PYTHON)):
        return "python"
    return arg.replace(str(ROOT) + os.sep, "").replace(str(work) + os.sep, "WORK/")


def command(cell: Cell, folder: Path) -> list[str]:
    """The cell's command; the same command continues it after a kill."""
    if cell.side == "ours":
        override = (
            f"env={cell.agent.get('env', cell.env)},eval.every_steps={cell.eval_every},"
            f"eval.episodes={cell.eval_episodes},train_steps={cell.budget},"
            f"checkpoint_every={cell.checkpoint_every}"
        )
        if cell.stop_at is not None:
            override += f",stop_at_eval_return={cell.stop_at}"
        if cell.agent["override"]:
            override += "," + cell.agent["override"]
        return [
            str(OURS_PYTHON), str(ROOT / "train.py"), "--hparams", cell.agent["set"],
            "--seed", str(cell.seed), "--output_dir", str(folder / "run"),
            "--hparam_override", override,
        ]  # fmt: skip
    cmd = [
        str(PEERS_PYTHON), "-m", "benchmarks.peers.sb3_cell", "--algo", cell.agent["algo"],
        "--env", cell.env, "--seed", str(cell.seed), "--budget", str(cell.budget),
        "--eval-every", str(cell.eval_every), "--eval-episodes", str(cell.eval_episodes),
        "--checkpoint-every", str(cell.checkpoint_every),
        "--hyperparams", json.dumps(cell.agent["hyperparams"], sort_keys=True),
        "--threads", str(cell.agent["torch_threads"]), "--dir", str(folder / "sb3"),
    ]  # fmt: skip
    if cell.agent["zoo_key"]:
        cmd += ["--zoo-key", cell.agent["zoo_key"]]
    if "horizon" in cell.agent:
        cmd += ["--horizon", str(cell.agent["horizon"])]
    if cell.stop_at is not None:
        cmd += ["--stop-at", str(cell.stop_at)]
    return cmd


def finished(cell: Cell, outcome: dict[str, Any] | None) -> bool:
    """The cell trained its budget, or stopped at its `stop_at` return."""
    if outcome is None:
        return False
    curve = outcome["eval_curve"]
    stopped = cell.stop_at is not None and bool(curve) and curve[-1]["mean"] >= cell.stop_at
    return outcome["env_steps"] >= cell.budget or stopped


def ours_outcome(folder: Path) -> dict[str, Any] | None:
    """The evaluation curve and counters of a finished train.py run, or None if unfinished."""
    run = folder / "run" / "run_0"
    try:
        pointer = json.loads((run / "checkpoints" / "latest.json").read_text())
        trainer = json.loads(
            (run / "checkpoints" / pointer["directory"] / "trainer.json").read_text()
        )
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    curve = []
    with (run / "progress.csv").open() as f:
        for row in csv.DictReader(f):
            if row.get("eval_return_mean"):
                curve.append({"step": int(row["env_steps"]), "mean": float(row["eval_return_mean"]),
                              "std": float(row["eval_return_std"])})  # fmt: skip
                if row.get("eval_success_rate"):  # goal envs
                    curve[-1]["success_rate"] = float(row["eval_success_rate"])
    hparams = json.loads((run / "hparams.json").read_text())["hparams"]
    return {
        "env_steps": trainer["env_steps"],
        "eval_curve": curve,
        "train_seconds": round(trainer["wall_seconds"], 2),
        "detail": {"hparams": hparams_tree_values(hparams)},
    }


def sb3_outcome(folder: Path) -> dict[str, Any] | None:
    try:
        result = json.loads((folder / "sb3" / "result.json").read_text())
    except FileNotFoundError:
        return None
    curve = [
        {k: e[k] for k in ("step", "mean", "std", "returns", "success_rate") if k in e}
        for e in result["evals"]
    ]
    detail = {k: result[k] for k in ("zoo", "env_state", "deterministic_eval", "torch_threads",
                                     "resumed_at")}  # fmt: skip
    return {"env_steps": result["env_steps"], "eval_curve": curve,
            "train_seconds": result["train_seconds"], "detail": detail,
            "versions": result["versions"]}  # fmt: skip


def attempts_of(folder: Path) -> list[dict[str, Any]]:
    found = sorted(folder.glob("attempt-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    return [json.loads(p.read_text()) for p in found]


def summarize(attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over attempts: wall and CPU seconds add up, memory and load take the maximum."""
    loads = [x for a in attempts for x in a["load_1min"]["samples"]]
    return {
        "wall_seconds": round(sum(a["wall_seconds"] for a in attempts), 2),
        "cpu_seconds": round(sum(a["cpu_seconds"] for a in attempts), 2),
        "peak_tree_rss_mb": max(a["peak_tree_rss_mb"] for a in attempts),
        "max_process_rss_mb": max(a.get("max_process_rss_mb", 0.0) for a in attempts),
        "load_1min": {
            "start": attempts[0]["load_1min"]["start"],
            "end": attempts[-1]["load_1min"].get("end"),
            "max": max([a["load_1min"]["max"] for a in attempts] + loads),
            "mean": round(sum(loads) / len(loads), 2) if loads else None,
        },
        "concurrent_cells": sorted({c for a in attempts for c in a["concurrent_cells"]}),
        "attempts": [
            {k: v for k, v in a.items() if k != "load_1min"}
            | {"load_1min_max": a["load_1min"]["max"]}
            for a in attempts
        ],
        "resumes": len(attempts) - 1,
    }


def held(lock: Path) -> bool:
    """Whether a runner, in this process or another, holds this cell folder's `.lock` (it does
    while the cell runs)."""
    with lock.open() as f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


def running_cells(work: Path) -> set[tuple[str, str]]:
    """(campaign, ENTRY/SIDE/seedN) of every cell running under `work` now."""
    found = set()
    for lock in work.glob("*/*/.lock"):
        if held(lock):
            entry, side, seed, _key = lock.parent.name.rsplit("-", 3)
            found.add((lock.parent.parent.name, f"{entry}/{side}/{seed}"))
    return found


class Runner:
    """Runs cells, `jobs` at a time, and names the cells that ran beside each
    (`concurrent_cells`): any cell under the same `--work` folder, of this runner or another."""

    def __init__(self, results: Path, work: Path, jobs: int) -> None:
        self.results, self.work, self.jobs = results, work, jobs
        self.machine = machine_info.cpu()
        self.ours_versions: dict[str, str] | None = None

    def others(self, me: Cell) -> set[str]:
        """The cells running now besides `me`; another campaign's named `CAMPAIGN/ENTRY/...`."""
        return {
            cell if campaign == me.campaign else f"{campaign}/{cell}"
            for campaign, cell in running_cells(self.work)
            if (campaign, cell) != (me.campaign, me.id)
        }

    def run_cell(self, cell: Cell) -> str:
        folder = cell_dir(self.work, cell)
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / ".lock").open("w") as lock:
            for attempt in range(3):  # another runner's `running_cells` holds it for a moment
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if attempt == 2:
                        return f"{cell.id}: running in another process, skipped"
                    time.sleep(0.2)
            return self._run_locked(cell, folder)

    def _run_locked(self, cell: Cell, folder: Path) -> str:
        path = records_file(self.results, cell.campaign)
        if cell.key in done_keys(path):
            return f"{cell.id}: already recorded"
        if (borrowed := recorded_elsewhere(self.results, cell)) is not None:
            source = {"campaign": borrowed["campaign"], "cell": borrowed["cell"]}
            reused = {"campaign": cell.campaign, "cell": cell.id, "entry": cell.entry}
            append_record(path, {**borrowed, **reused, "reused_from": source})
            return f"{cell.id}: reused {source['campaign']}'s record of {source['cell']}"
        for lock in self.work.glob(f"*/*-{cell.key}/.lock"):
            if lock.parent != folder and held(lock):  # the same spec, another campaign's cell
                return f"{cell.id}: running as {lock.parent.parent.name}'s cell, skipped"
        python = OURS_PYTHON if cell.side == "ours" else PEERS_PYTHON
        if not python.exists():
            setup = "./setup.sh" if cell.side == "ours" else "benchmarks/peers/setup.sh"
            return f"{cell.id}: FAILED, {python.relative_to(ROOT)} is missing (run {setup})"
        resume_from = checkpoint_step(folder, cell)
        cmd = command(cell, folder)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3",
               "CUDA_VISIBLE_DEVICES": "", "PYTHONUNBUFFERED": "1"}  # fmt: skip
        number = len(list(folder.glob("attempt-*.json")))
        print(f"{cell.id}: " + (f"resuming at step {resume_from}" if resume_from else "starting"),
              flush=True)  # fmt: skip
        attempt = process_meter.run_metered(
            cmd, cwd=folder, env=env, log=folder / "log.txt",
            attempt_file=folder / f"attempt-{number}.json",
            others=lambda: self.others(cell),
            facts={"git": machine_info.git_state()},  # the code it runs, read before it starts
        )  # fmt: skip
        outcome = (ours_outcome if cell.side == "ours" else sb3_outcome)(folder)
        ok = attempt["returncode"] == 0 and finished(cell, outcome)
        record = self.record(cell, folder, cmd, outcome, ok)
        if ok:
            append_record(path, record)
            final = record["final_eval_mean"]
            return f"{cell.id}: done, final evaluation {final:.2f} ({record['wall_seconds']} s)"
        tail = (folder / "log.txt").read_text(errors="replace")[-1500:]
        return f"{cell.id}: FAILED (exit {attempt['returncode']}); log tail:\n{tail}"

    def record(
        self, cell: Cell, folder: Path, cmd: list[str], outcome: dict | None, ok: bool
    ) -> dict[str, Any]:
        if cell.side == "ours" and self.ours_versions is None:
            self.ours_versions = machine_info.package_versions(str(OURS_PYTHON))
        outcome = outcome or {"eval_curve": [], "env_steps": None, "train_seconds": None}
        curve = outcome["eval_curve"]
        return {
            "campaign": cell.campaign,
            "cell": cell.id,
            "key": cell.key,
            "entry": cell.entry,
            "side": cell.side,
            "env": cell.env,
            "seed": cell.seed,
            "spec": cell.spec,
            "status": "ok" if ok else "failed",
            "eval_curve": curve,
            "final_eval_mean": curve[-1]["mean"] if curve else None,
            "env_steps": outcome["env_steps"],
            "train_seconds": outcome["train_seconds"],
            **summarize(attempts_of(folder)),
            "jobs": self.jobs,
            "machine": self.machine,
            "versions": outcome.get("versions") or self.ours_versions,
            "git": attempts_of(folder)[0].get("git"),  # the code that began the cell (and
            # each attempt's own in "attempts": a resumed cell may run on a later revision)
            "command": shlex.join(shown(c, self.work) for c in cmd),
            "detail": outcome.get("detail"),
            "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }


# ------------------------------------------------------------------------------ the commands
def selected(cells: list[Cell], args: argparse.Namespace) -> list[Cell]:
    if args.only:
        cells = [c for c in cells if c.side == args.only]
    if args.match:
        cells = [c for c in cells if fnmatch.fnmatch(c.id, args.match)]
    return cells


def cmd_run(args: argparse.Namespace) -> int:
    name, _, cells = load(args.campaign)
    cells = selected(cells, args)
    runner = Runner(args.results, args.work, args.jobs)
    done = done_keys(records_file(args.results, name))
    todo = [c for c in cells if c.key not in done]
    print(f"campaign {name}: {len(cells) - len(todo)} of {len(cells)} cells recorded, "
          f"{len(todo)} to run, {args.jobs} at a time", flush=True)  # fmt: skip
    failed = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for message in pool.map(runner.run_cell, todo):
            failed += "FAILED" in message
            print(message, flush=True)
    return 1 if failed else 0


def cmd_status(args: argparse.Namespace) -> int:
    name, _, cells = load(args.campaign)
    done = done_keys(records_file(args.results, name))
    for cell in selected(cells, args):
        if cell.key in done:
            state = "done"
        elif (step := checkpoint_step(cell_dir(args.work, cell), cell)) is not None:
            state = f"in progress: checkpoint at step {step:,} of {cell.budget:,}"
        else:
            state = "to do"
        print(f"{cell.id:48} {state}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    """benchmarks/campaign_stats.py on the campaign's records (it needs numpy: run `stats` with
    .venv/bin/python)."""
    from benchmarks import campaign_stats

    name, data, _ = load(args.campaign)
    options = ["--score", args.score] if args.score else []
    options += ["--baseline", data["baseline"]] if "baseline" in data else []
    return campaign_stats.main([str(records_file(args.results, name)), *options])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.campaign", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    helps = {
        "run": "run the cells not yet recorded",
        "status": "say which cells are done, in progress, to do",
        "stats": "IQM, bootstrap intervals, probability of improvement",
    }
    for name, help_ in helps.items():
        sub = commands.add_parser(name, help=help_)
        sub.add_argument("campaign", help="a name in benchmarks/campaigns/ or a .toml path")
        sub.add_argument("--results", type=Path, default=RESULTS, help="records (and cell folders)")
        sub.add_argument("--work", type=Path, help="cell folders (default: --results)")
        sub.add_argument("--only", choices=("ours", "sb3"))
        sub.add_argument("--match", help="cells whose id (ENTRY/SIDE/seedN) matches this glob")
        if name == "run":
            sub.add_argument("--jobs", type=int, default=1, help="cells at once (recorded)")
        if name == "stats":
            help_score = "default: steps where cells stop at a return, else final"
            sub.add_argument("--score", choices=("final", "last3", "steps"), help=help_score)
    args = parser.parse_args(argv)
    args.results = args.results.resolve()
    args.work = (args.work or args.results).resolve()
    return {"run": cmd_run, "status": cmd_status, "stats": cmd_stats}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
