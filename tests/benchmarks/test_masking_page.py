"""benchmarks/masking_page.py: the 95% interval by hand, "no clear difference" when the intervals
overlap, a side's row from its records, and docs/masking.md's section equal to what the records
make (standard library only: no training, no torch)."""

from __future__ import annotations

import math

import pytest

from benchmarks import masking_page as mp


def record(side, seed, final, cpu=20.0, wall=15.0, steps=50_000, model="Some CPU",
           env="LegalMoves-v0"):  # fmt: skip
    return {
        "side": side, "seed": seed, "env": env, "command": ["python", "x.py", "--seed", str(seed)],
        "eval_curve": [[10_240, 11.0], [steps, final]], "final_return": final,
        "wall_seconds": wall, "cpu_seconds": cpu, "cpu": {"model": model, "count": 2},
    }  # fmt: skip


def test_interval_is_the_t_interval_of_the_mean():
    # mean 13, sample std 1, 3 seeds: half-width t(0.975, 2) / sqrt(3) = 4.303 / 1.7321 = 2.4843
    mean, half = mp.interval([12.0, 13.0, 14.0])
    assert mean == 13.0
    assert half == pytest.approx(2.4843, abs=1e-4)
    assert math.isnan(mp.interval([5.0])[1])


def test_verdict_says_no_clear_difference_when_the_intervals_overlap():
    names = ("ours", "MaskablePPO")
    assert mp.verdict((12.0, 0.5), (12.8, 0.4), names).startswith("no clear difference")
    assert mp.verdict((12.0, 0.3), (12.8, 0.4), names) == (
        "MaskablePPO higher (the 95% intervals do not overlap)"
    )
    assert mp.verdict((13.0, 0.1), (12.0, 0.1), names).startswith("ours higher")
    assert mp.verdict((13.0, math.nan), (12.0, 0.1), names) == "too few seeds for an interval"


def test_a_row_per_side_from_the_newest_record_of_each_seed():
    records = [
        record("ours", 0, 10.0),  # replaced by the next record of seed 0
        record("ours", 0, 12.0, cpu=18.0),
        record("ours", 1, 13.0, cpu=22.0),
        record("ours", 2, 14.0, cpu=20.0),
        record("sb3-contrib", 0, 12.5, steps=50_176, cpu=40.0),
        record("sb3-contrib", 1, 12.9, steps=50_176, cpu=41.0),
    ]
    text = mp.section(records)
    ours = next(x for x in text.splitlines() if x.startswith("| ours"))
    cells = [c.strip() for c in ours.strip("|").split("|")]
    # the lowest second-half evaluation: seed 0's 12.00 at the final step (11.0 at 10,240 < half)
    assert cells[1:8] == ["0, 1, 2", "12.00, 13.00, 14.00", "13.00 ± 2.48", "12.00", "50,000",
                          "15", "18-22"]  # fmt: skip
    assert cells[8] == "Some CPU (2 cores)"
    assert cells[9] == "`python x.py --seed S`"
    theirs = next(x for x in text.splitlines() if x.startswith("| sb3-contrib"))
    assert "12.70 ± " in theirs and "| 50,176 |" in theirs
    assert "Final return: no clear difference" in text


def test_a_table_per_task_in_the_order_of_tasks_and_old_records_by_their_set():
    old_ours = {**record("ours", 0, 12.5), "hparams_set": "ppo_legal_moves"}
    del old_ours["env"]  # our records made before the second task name only their set
    records = [record("sb3-contrib", 0, 7.9, env="Taxi-v4"), record("ours", 0, 8.0, env="Taxi-v4")]
    text = mp.section([*records, old_ours])
    legal, taxi = text.index("**LegalMoves-v0**"), text.index("**Taxi-v4**")
    assert legal < taxi
    assert "| ours, `ppo_legal_moves` | 0 | 12.50 |" in text[legal:taxi]
    assert "| ours, `ppo_taxi` | 0 | 8.00 |" in text[taxi:]
    assert "| sb3-contrib `MaskablePPO` | 0 | - |" in text[legal:taxi]  # none on that task
    assert "| sb3-contrib `MaskablePPO` | 0 | 7.90 |" in text[taxi:]


def test_the_lowest_late_evaluation_reads_every_seed_from_half_its_budget_on():
    dips = {**record("ours", 1, 8.0), "eval_curve": [[10_000, -200.0], [30_000, -24.0],
                                                     [50_000, 8.0]]}  # fmt: skip
    assert mp.lowest_late_evaluation([record("ours", 0, 7.0), dips]) == -24.0


def test_render_replaces_only_between_the_markers():
    text = f"head\n{mp.BEGIN}\nold\n{mp.END}\ntail\n"
    assert mp.render(text, "new\n") == f"head\n{mp.BEGIN}\nnew\n{mp.END}\ntail\n"
    with pytest.raises(SystemExit, match="markers"):
        mp.render("no markers\n", "new\n")


def test_the_masking_page_is_generated_from_the_records():
    assert mp.main(["--check"]) == 0, f"docs/masking.md is stale: {mp.REGENERATE}"
