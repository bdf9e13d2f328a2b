"""benchmarks/pages.py: which runs overlapped in time, a row's seeds, CPU seconds and CPU model
as its records hold them, a campaign's table, and sections replaced only between their
markers (no training, no rliable: the statistics are stubbed)."""

from __future__ import annotations

import json

import pytest

from benchmarks import pages
from benchmarks.algorithm_rows import MUJOCO_ROWS, PROTOCOL


def run(side, seed, start, stop, cpu=10.0, model=None, steps=20_000, final=-90.0):
    """An algorithm-table record of `dqn_acrobot`, run from `start` to `stop` (HH:MM)."""
    record = {
        "side": side, "set": "dqn_acrobot", "env": "Acrobot-v1", "seed": seed,
        "budget": 100_000, "protocol": PROTOCOL["Acrobot-v1"], "status": "ok",
        "solved": True, "env_steps_to_threshold": steps, "final_eval_mean": final,
        "cpu_seconds": cpu, "eval_history": [],
        "machine_before": {"loadavg": [1.0, 1, 1], "time_utc": f"2026-11-22T{start}:00Z"},
        "machine_after": {"loadavg": [3.0, 1, 1], "time_utc": f"2026-11-22T{stop}:00Z"},
    }  # fmt: skip
    if model:
        record["machine"] = {"model": model}
    return record


def test_runs_overlap_when_their_spans_cross_not_when_they_touch():
    a, b = run("ours", 0, "01:00", "01:10"), run("sb3", 0, "01:10", "01:20")
    c = run("ours", 1, "01:05", "01:15")
    everything = [a, b, c]
    assert pages.overlapping(a, everything) == ["dqn_acrobot/ours/seed1"]
    assert pages.overlapping(b, everything) == ["dqn_acrobot/ours/seed1"]
    assert pages.overlapping(c, everything) == ["dqn_acrobot/ours/seed0", "dqn_acrobot/sb3/seed0"]
    assert pages.overlap_cell([("ours", a), ("SB3", b)], everything) == (
        "ours 0: dqn_acrobot/ours/seed1; SB3 0: dqn_acrobot/ours/seed1"
    )
    assert pages.overlap_cell([("ours", a)], [a]) == "none"


def test_a_row_gives_seeds_per_side_cpu_seconds_and_the_cpu_its_records_name():
    results = [
        run("ours", 0, "01:00", "01:10", cpu=10.0, steps=10_000),
        run("ours", 1, "01:10", "01:20", cpu=30.0, steps=30_000),
        run("ours", 2, "01:20", "01:30", cpu=20.0, steps=20_000),
        run("sb3", 0, "01:25", "01:40", cpu=80.0, steps=40_000, model="Some CPU"),
    ]
    text = pages.algorithm_table_section(results)
    line = next(x for x in text.splitlines() if x.startswith("| `dqn_acrobot`"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[3] == "3 / 1"  # seeds ours / SB3
    assert cells[5] == "-90.0"  # one SB3 run: its value, no spread
    assert cells[7:10] == ["20,000", "40,000", "0.50"]  # median steps, ours / SB3
    assert cells[10:13] == ["20.0", "80.0", "0.25"]  # median CPU seconds, ours / SB3
    assert cells[13] == "Some CPU, not recorded"
    assert cells[16] == "ours 2: dqn_acrobot/sb3/seed0; SB3 0: dqn_acrobot/ours/seed2"
    assert "MuJoCo rows with no record: `sac_halfcheetah`" in text


def test_the_mujoco_section_reports_finals_cpu_seconds_and_curves():
    row = next(r for r in MUJOCO_ROWS if r.set == "sac_halfcheetah")

    def mujoco_run(side, seed, finals, start, stop):
        history = [{"step": 50_000 * (i + 1), "mean": m} for i, m in enumerate(finals)]
        return {
            **run(side, seed, start, stop, cpu=500.0 + seed, final=finals[-1]),
            "set": row.set, "env": row.env, "budget": 300_000,
            "protocol": PROTOCOL[row.env], "eval_history": history,
        }  # fmt: skip

    results = [
        mujoco_run("ours", 0, [3000, 5000, 6000, 7000, 7500, 8000], "01:00", "02:00"),
        mujoco_run("ours", 1, [2000, 4000, 4500, 4600, 4700, 4000], "02:00", "03:00"),
        mujoco_run("sb3", 0, [3500, 6000, 7000, 8000, 9000, 9800], "02:30", "04:00"),
    ]
    text = pages.algorithm_table_section(results)
    line = next(x for x in text.splitlines() if x.startswith("| `sac_halfcheetah` | Half"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    # mean and population std of 8000 and 4000; one SB3 run: its value alone
    assert cells[2:5] == ["2 / 1", "6000.0 ± 2000.0", "9800.0"]
    assert cells[5:8] == ["500", "500", "1.00"]  # median CPU seconds, ours / SB3
    assert cells[11] == "ours 1: sac_halfcheetah/sb3/seed0; SB3 0: sac_halfcheetah/ours/seed1"
    curve = "| `sac_halfcheetah` | ours | 1 | 2,000 | 4,000 | 4,500 | 4,600 | 4,700 | 4,000 |"
    assert curve in text
    assert "MuJoCo rows with no record: `sac_hopper`" in text
    assert pages.eval_at(results[0]["eval_history"], 100_000, 10_000) == "5,000"


def test_a_campaign_table_names_cpu_jobs_and_the_cells_beside(tmp_path):
    def cell(side, seed, cpu, beside):
        return {
            "key": f"{side}{seed}", "entry": "td3_hopper", "env": "Hopper-v5", "side": side,
            "seed": seed, "status": "ok", "cpu_seconds": cpu, "jobs": 2,
            "machine": {"model": "Some CPU"}, "load_1min": {"max": 2.5},
            "concurrent_cells": beside, "eval_curve": [{"step": 10, "mean": 1.0}],
        }  # fmt: skip

    stats = [{"entry": "td3_hopper", "seeds": {"ours": [0, 1], "sb3": [0]},
              "verdict": "needs >= 2 seeds per side"}]  # fmt: skip
    records = [cell("ours", 0, 100.0, ["td3_hopper/sb3/seed0"]), cell("ours", 1, 300.0, []),
               cell("sb3", 0, 400.0, ["td3_hopper/ours/seed0"])]  # fmt: skip
    path = tmp_path / "example.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    text = pages.campaign_section([path], lambda _: stats)
    line = next(x for x in text.splitlines() if x.startswith("| `td3_hopper`"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[2:] == ["2 / 1", "200", "400", "0.50", "Some CPU", "2", "2.5",
                         "td3_hopper/ours/seed0, td3_hopper/sb3/seed0"]  # fmt: skip
    assert "| td3_hopper | 2 / 1 | - | - | - | needs >= 2 seeds per side |" in text
    assert "No campaign has records yet" in pages.campaign_section([], lambda _: [])


def test_a_goal_env_campaign_shows_the_success_rate_over_steps_per_side(tmp_path):
    def cell(side, seed, rates):
        # Ours evaluates at the end of the update at or past each scheduled step.
        steps = [2048, 4032] if side == "ours" else [2000, 4000]
        curve = [{"step": steps[i], "mean": -10.0, "success_rate": r}
                 for i, r in enumerate(rates)]  # fmt: skip
        return {
            "key": f"{side}{seed}", "entry": "sac_her", "env": "FetchReach-v4", "side": side,
            "seed": seed, "status": "ok", "cpu_seconds": 1.0, "jobs": 1,
            "machine": {"model": "Some CPU"}, "load_1min": {"max": 1.0},
            "concurrent_cells": [], "eval_curve": curve, "spec": {"eval_every": 2000},
        }  # fmt: skip

    records = [cell("ours", 0, [0.0, 0.5]), cell("ours", 1, [0.2, 1.0]),
               cell("sb3", 0, [0.4, 0.9])]  # fmt: skip
    path = tmp_path / "her.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    text = pages.campaign_section([path], lambda _: [])
    assert "| entry | side | 2,000 | 4,000 | final per seed |" in text
    assert "| `sac_her` | ours | 0.10 | 0.75 | 0.50, 1.00 |" in text
    assert "| `sac_her` | sb3 | 0.40 | 0.90 | 0.90 |" in text
    path.write_text(json.dumps(cell("ours", 0, [0.0])).replace(', "success_rate": 0.0', ""))
    assert "Success rate" not in pages.campaign_section([path], lambda _: [])


def test_render_replaces_only_between_the_markers():
    text = f"head\n{pages.begin('a')}\nold\n{pages.end('a')}\ntail\n"
    assert pages.render(text, {"a": "new\n"}) == (
        f"head\n{pages.begin('a')}\nnew\n{pages.end('a')}\ntail\n"
    )
    with pytest.raises(SystemExit, match="markers"):
        pages.render("no markers\n", {"a": "new\n"})
