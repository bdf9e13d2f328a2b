"""A campaign's two sides compared as rliable compares them: interquartile mean (IQM) with 95%
stratified-bootstrap confidence intervals per side, and the probability of improvement P(ours >
SB3) with its interval, per entry and over all entries; a verdict from that interval.

    python -m benchmarks.campaign stats mujoco_300k

The statistics are rliable's (its metrics, its stratified bootstrap, its percentile intervals at
its default 50,000 resamples), computed here with numpy on all resamples at once: rliable calls a
statistic once per resample, too slow at that count for a page of many entries in CI.
tests/benchmarks/test_campaign_stats.py checks the numbers against rliable's own (in the peers
venv, where rliable is installed).

Why these: with 3-5 seeds a mean is at the mercy of one lucky or failed seed, and a table of
means says nothing of how sure it is. The IQM (mean of the middle 50% of runs) is robust to that
and still uses half the runs; the intervals say how much the seeds allow (Agarwal et al., "Deep
RL at the edge of the statistical precipice", the rliable library). P(ours > SB3) is the chance
that a run of ours scores above a run of SB3 on the same entry (Mann-Whitney), needs no common
scale across envs, so it also averages over entries. The verdict reads its interval: "ahead" if
the whole interval is above 0.5, "behind" if below, else "no clear difference".

A run's score is its final evaluation mean (`--score final`), the mean of its last three
evaluations (`last3`, less noisy on a jumpy curve) or, in a campaign with a `stop_at` return, the
env steps to the first evaluation that reached it (`steps`, the default there: fewer is better, a
run that never reached it is worse than any that did, and an entry with such a run gets no IQM).
Bootstraps use a fixed random state, so the same records give the same intervals.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPS = 50_000  # bootstrap resamples: rliable's default


def verdict(low: float, high: float) -> str:
    """From the interval of P(ours > SB3): which side is ahead, if the interval says so (an end
    within rounding of 0.5, such as 0.49999999999999994 from a mean over tasks, touches it)."""
    if low > 0.5 + 1e-9:
        return "ahead"
    if high < 0.5 - 1e-9:
        return "behind"
    return "no clear difference"


def default_score(records: list[dict[str, Any]]) -> str:
    """`steps` for a campaign whose cells stop at a return, else `final`."""
    return "steps" if any("stop_at" in r.get("spec", {}) for r in records) else "final"


def steps_to_threshold(record: dict[str, Any]) -> int | None:
    """The env steps of the first evaluation whose mean reached the cell's `stop_at`, or None."""
    stop_at = record["spec"]["stop_at"]
    return next((p["step"] for p in record["eval_curve"] if p["mean"] >= stop_at), None)


def score(record: dict[str, Any], how: str = "final") -> float:
    """Higher is better: `steps` scores minus the env steps (minus infinity: never reached)."""
    curve = record["eval_curve"]
    if how == "steps":
        steps = steps_to_threshold(record)
        return -math.inf if steps is None else -float(steps)
    if how == "last3":
        return float(np.mean([point["mean"] for point in curve[-3:]]))
    return float(curve[-1]["mean"])


def scores_by_entry(
    records: list[dict[str, Any]], how: str = "final"
) -> dict[str, dict[str, dict[int, float]]]:
    """{entry: {side: {seed: score}}} from the newest ok record of each cell."""
    latest: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.get("status") == "ok" and record["eval_curve"]:
            latest[record["key"]] = record
    table: dict[str, dict[str, dict[int, float]]] = {}
    for record in latest.values():
        sides = table.setdefault(record["entry"], {"ours": {}, "sb3": {}})
        sides[record["side"]][record["seed"]] = score(record, how)
    return table


def bootstrap_interval(
    statistic: Callable[..., np.ndarray], samples: list[np.ndarray], reps: int = REPS
) -> tuple[float, float, float]:
    """(point, low, high): `statistic` of the runs x tasks `samples`, and its 95% percentile
    interval over `reps` stratified resamples (each sample's runs drawn again with replacement
    within each task, the samples independently), as rliable's `get_interval_estimates` does.
    `statistic` takes arrays of reps x runs x tasks and returns one value per rep. A fixed seed:
    the same records give the same interval."""
    rng = np.random.default_rng(0)
    drawn = []
    for runs in samples:
        n, tasks = runs.shape
        drawn.append(runs[rng.integers(0, n, size=(reps, n, tasks)), np.arange(tasks)])
    low, high = np.percentile(statistic(*drawn), [2.5, 97.5])
    point = statistic(*(runs[None] for runs in samples))[0]
    return float(point), float(low), float(high)


def iqm(runs: np.ndarray) -> np.ndarray:
    """Interquartile mean per leading index of reps x runs x tasks scores: the mean of all runs
    and tasks after cutting int(25 %) of them from each end, as `scipy.stats.trim_mean(x, 0.25,
    axis=None)` (rliable's `aggregate_iqm`)."""
    flat = np.sort(runs.reshape(len(runs), -1), axis=1)
    cut = int(0.25 * flat.shape[1])
    return flat[:, cut : flat.shape[1] - cut].mean(axis=1)


def probability_of_improvement(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(a run of x scores above a run of y) per leading index of reps x runs x tasks scores, ties
    counting half, averaged over tasks: rliable's `metrics.probability_of_improvement` (Mann-
    Whitney U / (n_x n_y) per task)."""
    pairs_greater = x[:, :, None, :] > y[:, None, :, :]
    pairs_tied = x[:, :, None, :] == y[:, None, :, :]
    per_task = pairs_greater.mean(axis=(1, 2)) + 0.5 * pairs_tied.mean(axis=(1, 2))
    return per_task.mean(axis=1)


def compare(table: dict[str, dict[str, dict[int, float]]], reps: int = REPS) -> list[dict]:
    """One row per entry with an SB3 side (>= 2 seeds a side for an interval), then `all
    entries`: P(ours > SB3) averaged over the entries, on the seeds every entry has (the
    bootstrap needs equal runs per entry)."""
    rows, usable = [], []
    for entry, sides in sorted(table.items()):
        ours, sb3 = sides["ours"], sides["sb3"]
        if not sb3:  # an entry of ours alone (a factor, a tuned set): compare_to_baseline's
            continue
        row: dict[str, Any] = {"entry": entry, "seeds": {"ours": sorted(ours), "sb3": sorted(sb3)}}
        if len(ours) < 2 or len(sb3) < 2:
            row["verdict"] = "needs >= 2 seeds per side"
            rows.append(row)
            continue
        a = np.array([[v] for v in ours.values()])
        b = np.array([[v] for v in sb3.values()])
        if np.isfinite(a).all() and np.isfinite(b).all():
            row["iqm"] = {
                "ours": bootstrap_interval(iqm, [a], reps),
                "sb3": bootstrap_interval(iqm, [b], reps),
            }
        row["p_improvement"] = bootstrap_interval(probability_of_improvement, [a, b], reps)
        row["verdict"] = verdict(*row["p_improvement"][1:])
        rows.append(row)
        usable.append(entry)
    if len(usable) >= 2:
        common = {
            side: sorted(set.intersection(*(set(table[e][side]) for e in usable)))
            for side in ("ours", "sb3")
        }
        if len(common["ours"]) >= 2 and len(common["sb3"]) >= 2:
            a, b = (
                np.array([[table[e][side][s] for e in usable] for s in common[side]])
                for side in ("ours", "sb3")
            )
            p = bootstrap_interval(probability_of_improvement, [a, b], reps)
            rows.append({"entry": "all entries", "seeds": common, "p_improvement": p,
                         "verdict": verdict(*p[1:])})  # fmt: skip
    return rows


SCORES = {
    "final": "final evaluation",
    "last3": "mean of the last 3 evaluations",
    "steps": "env steps to the threshold (IQM only where every seed reached it)",
}


def compare_to_baseline(
    table: dict[str, dict[str, dict[int, float]]], baseline: str, reps: int = REPS
) -> list[dict]:
    """Our side of each entry against our side of `baseline` (a factor campaign's unchanged set):
    P(a run of the entry scores above a run of the baseline) with its interval, and the verdict
    read from it ("ahead": the change helps)."""
    base = table.get(baseline, {}).get("ours", {})
    rows = []
    for entry, sides in sorted(table.items()):
        if entry == baseline:
            continue
        ours = sides["ours"]
        row: dict[str, Any] = {
            "entry": entry,
            "seeds": {"entry": sorted(ours), "baseline": sorted(base)},
        }
        if len(ours) < 2 or len(base) < 2:
            row["verdict"] = "needs >= 2 seeds per side"
        else:
            a = np.array([[v] for v in ours.values()])
            b = np.array([[v] for v in base.values()])
            row["p_improvement"] = bootstrap_interval(probability_of_improvement, [a, b], reps)
            row["verdict"] = verdict(*row["p_improvement"][1:])
        rows.append(row)
    return rows


def markdown(rows: list[dict[str, Any]], how: str) -> str:
    def interval(t: tuple[float, float, float], digits: int = 1) -> str:
        return f"{t[0]:,.{digits}f} [{t[1]:,.{digits}f}, {t[2]:,.{digits}f}]"

    def iqm(t: tuple[float, float, float]) -> str:
        """Steps are scored negated (higher is better): shown as steps again."""
        return interval((-t[0], -t[2], -t[1]), 0) if how == "steps" else interval(t)

    better = "needs fewer steps than" if how == "steps" else "scores above"
    lines = [
        f"Score: {SCORES[how]}; point [95% stratified-bootstrap interval]. P(ours > SB3): the "
        f"chance that a run of ours {better} a run of SB3.",
        "",
        "| entry | seeds ours / SB3 | IQM ours | IQM SB3 | P(ours > SB3) | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        seeds = f"{len(row['seeds']['ours'])} / {len(row['seeds']['sb3'])}"
        cells = [
            row["entry"],
            seeds,
            iqm(row["iqm"]["ours"]) if "iqm" in row else "-",
            iqm(row["iqm"]["sb3"]) if "iqm" in row else "-",
            interval(row["p_improvement"], 2) if "p_improvement" in row else "-",
            row["verdict"],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def baseline_markdown(rows: list[dict[str, Any]], baseline: str) -> str:
    """The rows of `compare_to_baseline` as a table."""
    lines = [
        f"Each entry's runs of ours against those of `{baseline}` (ours, unchanged): P(entry > "
        f"{baseline}) is the chance that a run of the entry scores above a run of `{baseline}`, "
        "point [95% stratified-bootstrap interval]; *ahead*: the change helps.",
        "",
        f"| entry | seeds entry / {baseline} | P(entry > {baseline}) | verdict |",
        "|---|---|---|---|",
    ]
    for row in rows:
        p = row.get("p_improvement")
        cells = [
            row["entry"],
            f"{len(row['seeds']['entry'])} / {len(row['seeds']['baseline'])}",
            f"{p[0]:.2f} [{p[1]:.2f}, {p[2]:.2f}]" if p else "-",
            row["verdict"],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path, help="a campaign's .jsonl")
    parser.add_argument("--score", choices=sorted(SCORES), help="default: steps with stop_at")
    parser.add_argument("--reps", type=int, default=REPS)
    parser.add_argument("--json", action="store_true", help="rows as JSON instead of a table")
    parser.add_argument("--baseline", help="also compare every entry's ours with this entry's")
    args = parser.parse_args(argv)
    if not args.records.exists():
        raise SystemExit(f"no records yet ({args.records.name}): run the campaign first")
    records = [json.loads(line) for line in args.records.read_text().splitlines() if line]
    how = args.score or default_score(records)
    table = scores_by_entry(records, how)
    rows = compare(table, args.reps)
    print(json.dumps(rows) if args.json else markdown(rows, how), end="")
    if args.baseline:
        factors = compare_to_baseline(table, args.baseline, args.reps)
        print(json.dumps(factors) if args.json else baseline_markdown(factors, args.baseline))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
