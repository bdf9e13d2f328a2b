"""The algorithm table's records (benchmarks/results/algorithm_table.jsonl, one JSON line per
run) and what is read from them: the latest run per key, each side of a row over its seeds, and
the `--status` / `--runs` listings. benchmarks/pages.py renders docs/benchmarks.md from these."""

from __future__ import annotations

import fcntl
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.algorithm_rows import PROTOCOL, Row

RESULTS = Path(__file__).resolve().parent / "results" / "algorithm_table.jsonl"


def hparams_values(text: str) -> dict[str, Any]:
    """hparams.json -> {dotted key: value}, docs and types dropped: what a run was given."""
    return hparams_tree_values(json.loads(text)["hparams"])


def hparams_tree_values(entries: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """hparams.json's tree -> {dotted key: value} (a nested set's keys dotted under its name)."""
    out: dict[str, Any] = {}
    for name, entry in entries.items():
        if entry["type"] == "hparams":
            out.update(hparams_tree_values(entry["value"], f"{prefix}{name}."))
        else:
            out[prefix + name] = entry["value"]
    return out


def same_value(key: str, measured: Any, current: Any) -> bool:
    """Equal, or the same setting in a later spelling: a float that became a schedule
    `constant(x)`, and `jit_compile` True that became `auto` (XLA for every set in these tables:
    MLP torsos on CPU, rl/utils/compiler.py)."""
    if measured == current or current == f"constant({measured!r})":
        return True
    return key == "jit_compile" and measured is True and current == "auto"


def changed_values(measured: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Keys whose value differs between a run and the set now. Keys only one side has are
    code changes (a new option keeps its old behaviour by default), not a changed set."""
    return [
        f"{k}: {measured[k]} -> {current[k]}"
        for k in sorted(set(measured) & set(current))
        if not same_value(k, measured[k], current[k])
    ]


def load_results(path: Path = RESULTS) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append_result(record: dict[str, Any], path: Path = RESULTS) -> None:
    """One locked append, so an `--only ours` and an `--only sb3` runner can share the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(json.dumps(record, sort_keys=True) + "\n")
        f.flush()


def key(record: dict[str, Any]) -> tuple:
    return (
        record["side"],
        record["set"],
        record["env"],
        record["seed"],
        record["budget"],
        json.dumps(record["protocol"], sort_keys=True),
    )


def latest(results: list[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    """The last record per key (a later run of the same thing replaces an earlier one)."""
    table: dict[tuple, dict[str, Any]] = {}
    for record in results:
        table[key(record)] = record
    return table


def wanted_key(side: str, row: Row, seed: int, budget: int) -> tuple:
    probe = {"side": side, "set": row.set, "env": row.env, "seed": seed, "budget": budget}
    return key({**probe, "protocol": PROTOCOL[row.env]})


@dataclass
class Side:
    """One side of a row, summarized over the seeds that have an ok record."""

    records: list[dict[str, Any]]
    missing: list[int]
    failed: list[str]
    changed: list[str]  # hparams values that differ between the runs and the set now

    @property
    def done(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["status"] == "ok"]

    def solved(self) -> int:
        return sum(1 for r in self.done if r["solved"])

    def median_total(self, field: str) -> float | None:
        """Median over seeds of a whole run's `wall` (training loop) or `cpu` seconds."""
        name = {"wall": "wall_seconds_total", "cpu": "cpu_seconds"}[field]
        return statistics.median(r[name] for r in self.done) if self.done else None

    def median(self, field: str) -> float | None:
        """Median over seeds with a not-reached seed counted as infinitely slow: a number only
        when most seeds reached the threshold."""
        done = self.done
        if not done:
            return None
        values = [r[field] if r["solved"] else float("inf") for r in done]
        value = statistics.median(values)
        return None if value == float("inf") else value

    def final(self) -> str:
        finals = [r["final_eval_mean"] for r in self.done if r["final_eval_mean"] is not None]
        if not finals:
            return "-"
        return f"{statistics.fmean(finals):.1f} ± {statistics.pstdev(finals):.1f}"


def collect(
    row: Row,
    side: str,
    seeds: list[int],
    budget: int,
    cache: dict,
    current: dict[str, Any] | None,
) -> Side:
    """The records of one side of a row; `current`: the set's hparams values now (ours)."""
    records, missing, failed, changed = [], [], [], []
    for seed in seeds:
        record = cache.get(wanted_key(side, row, seed, budget))
        if record is None:
            missing.append(seed)
            continue
        records.append(record)
        if record["status"] != "ok":
            failed.append(f"seed {seed} {record['status']} after {record['process_seconds']:.0f} s")
        elif current is not None and "hparams_values" in record:
            for change in changed_values(record["hparams_values"], current):
                if change not in changed:
                    changed.append(change)
    return Side(records, missing, failed, changed)


def notes(ours: Side, sb3: Side, seeds: list[int]) -> str:
    parts = []
    for name, side in (("ours", ours), ("SB3", sb3)):
        if len(side.missing) == len(seeds):
            parts.append(f"{name}: not run")
        elif side.missing:
            parts.append(f"{name}: seeds {', '.join(map(str, side.missing))} not run (partial)")
        parts += [f"{name}: {text}" for text in side.failed]
    if ours.changed:
        parts.append(f"ours: STALE, the set changed since measured ({'; '.join(ours.changed)})")
    return "; ".join(parts)


def render_status(
    rows: list[Row],
    seeds: list[int],
    budgets: dict[str, int],
    results: list[dict[str, Any]],
    current: dict[str, dict[str, Any] | None],
) -> str:
    """One line per row (`--status`): seeds recorded per side, and what is missing, partial,
    failed or stale (the set's values changed since it was measured). The tables themselves are
    docs/benchmarks.md's (`python -m benchmarks.pages`)."""
    cache = latest(results)
    lines = []
    for row in rows:
        budget = budgets[row.set]
        ours = collect(row, "ours", seeds, budget, cache, current.get(row.set))
        sb3 = collect(row, "sb3", seeds, budget, cache, None)
        state = notes(ours, sb3, seeds) or "complete"
        lines.append(
            f"{row.set} ({row.env}, {budget:,} steps): ours {len(ours.done)}, SB3 "
            f"{len(sb3.done)} of {len(seeds)} seeds; {state}"
        )
    return "\n".join(lines) + "\n"


def render_runs(
    rows: list[Row], seeds: list[int], budgets: dict[str, int], results: list[dict[str, Any]]
) -> str:
    """One line per cached run of the early-stopping rows (`--runs`): what the table's medians
    are taken over."""
    cache = latest(results)
    lines = [
        "Per run (steps / wall s to the threshold, or `-` if not reached; load = 1-minute load "
        "average before / after the run; CPU s = the run's process tree):",
        "",
        "| set | side | seed | steps | wall s | final eval | total steps | total wall s | CPU s "
        "| load | measured (UTC) |",
        "|" + "---|" * 11,
    ]
    for row in rows:
        for side, label in (("ours", "ours"), ("sb3", "SB3")):
            records = collect(row, side, seeds, budgets[row.set], cache, None).records
            lines += [detail_line(row, label, r) for r in records]
    return "\n".join(lines) + "\n"


def detail_line(row: Row, side_name: str, r: dict[str, Any]) -> str:
    load = f"{r['machine_before']['loadavg'][0]:.1f} / {r['machine_after']['loadavg'][0]:.1f}"
    when = r["machine_before"]["time_utc"][:16].replace("T", " ")
    if r["status"] != "ok":
        cells = [f"`{row.set}`", side_name, str(r["seed"]), r["status"], "", "", "", ""]
        cells += [f"{r['process_seconds']:.0f} (process)", f"{r['cpu_seconds']:.0f}", load, when]
        return "| " + " | ".join(cells) + " |"
    solved = r["solved"]
    cells = [
        f"`{row.set}`",
        side_name,
        str(r["seed"]),
        f"{r['env_steps_to_threshold']:,}" if solved else "-",
        f"{r['wall_seconds_to_threshold']:.1f}" if solved else "-",
        f"{r['final_eval_mean']:.1f}" if r["final_eval_mean"] is not None else "-",
        f"{r['env_steps_total']:,}",
        f"{r['wall_seconds_total']:.1f}",
        f"{r['cpu_seconds']:.0f}",
        load,
        when,
    ]
    return "| " + " | ".join(cells) + " |"


def needs_rerun(cached: dict[str, Any], current: dict[str, Any] | None) -> bool:
    """A cached run is redone when it failed (a crash, not a timeout) or, for ours, when the set's
    values changed since (the new run replaces it in the table; the old line stays in the file)."""
    if cached["status"] == "failed":
        return True
    measured = cached.get("hparams_values")
    return bool(measured and current and changed_values(measured, current))
