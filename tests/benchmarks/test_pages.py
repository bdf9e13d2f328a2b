"""benchmarks/pages.py: a campaign's table (seeds, CPU seconds, CPU model, the cells beside; where
cells stop at a threshold, how many reached it and the median steps), and sections replaced only
between their markers (no training, no rliable: the statistics are stubbed)."""

from __future__ import annotations

import json

import pytest

from benchmarks import pages


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


def test_a_threshold_campaign_counts_who_reached_it_and_the_median_steps(tmp_path):
    def cell(side, seed, means, cpu):
        curve = [{"step": 5000 * (i + 1), "mean": m} for i, m in enumerate(means)]
        return {
            "key": f"{side}{seed}", "entry": "dqn_cartpole", "env": "CartPole-v1", "side": side,
            "seed": seed, "status": "ok", "cpu_seconds": cpu, "jobs": 1,
            "machine": {"model": "Some CPU"}, "load_1min": {"max": 1.0}, "concurrent_cells": [],
            "eval_curve": curve, "spec": {"stop_at": 475.0, "budget": 15_000},
        }  # fmt: skip

    records = [cell("ours", 0, [100, 480], 10.0), cell("ours", 1, [500], 20.0),
               cell("ours", 2, [100, 200, 300], 30.0), cell("sb3", 0, [100, 200, 300], 40.0),
               cell("sb3", 1, [100, 200, 476], 50.0)]  # fmt: skip
    path = tmp_path / "classic.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    seen = []
    row = {"entry": "dqn_cartpole", "seeds": {"ours": [0, 1, 2], "sb3": [0, 1]}, "verdict": "v"}
    text = pages.campaign_section([path], lambda p: seen.append(p) or [row])
    line = next(x for x in text.splitlines() if x.startswith("| `dqn_cartpole`"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    # ours: 5,000 and 10,000 and one that never reached it (the slowest): median 10,000;
    # SB3: 15,000 and never: the median seed (the higher of two) did not reach it
    assert cells[2:10] == ["475", "15,000", "2 of 3 / 1 of 2", "10,000", "-", "20", "45", "0.44"]
    assert "Score: env steps to the threshold" in text and seen == [path]
    # no statistics (every entry of ours alone): no empty table
    assert "| entry | seeds ours / SB3 |" not in pages.campaign_section([path], lambda _: [])


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
