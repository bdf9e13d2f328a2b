"""benchmarks/campaign_stats.py: the verdict reads the interval of P(ours > SB3); scores come
from the newest ok record per cell; IQM and probability-of-improvement intervals on seeds that
clearly separate, overlap or tie; and, with rliable (the peers venv, .ci/run's peers step), our
metrics and intervals against rliable's own."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import campaign_stats as stats

# rliable hands arch a RandomState, which arch 7 announces it will stop taking.
pytestmark = pytest.mark.filterwarnings("ignore:random_state is deprecated:FutureWarning")

REPS = 2000  # enough to place an interval on 5 seeds


def _record(entry: str, side: str, seed: int, means: list[float], **extra) -> dict:
    curve = [{"step": 1000 * (i + 1), "mean": m, "std": 0.0} for i, m in enumerate(means)]
    key = f"{entry}/{side}/{seed}/{extra.get('budget', 0)}"
    return {"key": key, "entry": entry, "side": side, "seed": seed, "status": "ok",
            "eval_curve": curve, **extra}  # fmt: skip


def test_verdict_reads_the_interval_against_one_half() -> None:
    assert stats.verdict(0.6, 0.9) == "ahead"
    assert stats.verdict(0.1, 0.45) == "behind"
    assert stats.verdict(0.4, 0.7) == "no clear difference"
    assert stats.verdict(0.5, 1.0) == "no clear difference"  # touching 0.5 is not clear


def test_scores_take_the_newest_ok_record_of_each_cell() -> None:
    records = [
        _record("hopper", "ours", 0, [1.0, 2.0, 3.0]),
        _record("hopper", "ours", 0, [1.0, 2.0, 9.0]),  # the same cell, recorded again
        {**_record("hopper", "sb3", 0, [5.0]), "status": "failed"},
        _record("hopper", "sb3", 1, [4.0, 6.0, 8.0]),
    ]
    assert stats.scores_by_entry(records) == {"hopper": {"ours": {0: 9.0}, "sb3": {1: 8.0}}}
    assert stats.scores_by_entry(records, "last3")["hopper"]["ours"] == {0: 4.0}


def test_steps_to_a_threshold_score_fewer_higher_and_never_lowest() -> None:
    spec = {"spec": {"stop_at": 10.0}}
    records = [
        _record("cartpole", "ours", 0, [5.0, 10.0, 12.0], **spec),  # reached at step 2000
        _record("cartpole", "ours", 1, [11.0], **spec),
        _record("cartpole", "sb3", 0, [1.0, 2.0], **spec),  # never
    ]
    assert stats.default_score(records) == "steps"
    assert stats.default_score([_record("hopper", "ours", 0, [1.0])]) == "final"
    scores = stats.scores_by_entry(records, "steps")["cartpole"]
    assert scores == {"ours": {0: -2000.0, 1: -1000.0}, "sb3": {0: -np.inf}}


def test_a_factor_is_compared_with_the_unchanged_set() -> None:
    table = {
        "baseline": {"ours": {s: 10.0 + s for s in range(5)}, "sb3": {}},
        "helps": {"ours": {s: 100.0 + s for s in range(5)}, "sb3": {}},
        "unclear": {"ours": {0: 9.0, 1: 15.0, 2: 11.0, 3: 13.0, 4: 12.0}, "sb3": {}},
        "one_seed": {"ours": {0: 1.0}, "sb3": {}},
    }
    rows = {r["entry"]: r for r in stats.compare_to_baseline(table, "baseline", REPS)}
    assert set(rows) == {"helps", "unclear", "one_seed"}
    assert rows["helps"]["p_improvement"] == (1.0, 1.0, 1.0)
    assert rows["helps"]["verdict"] == "ahead"
    assert rows["unclear"]["verdict"] == "no clear difference"
    assert rows["one_seed"]["verdict"] == "needs >= 2 seeds per side"
    text = stats.baseline_markdown(list(rows.values()), "baseline")
    assert "| helps | 5 / 5 | 1.00 [1.00, 1.00] | ahead |" in text


def test_an_entry_with_one_seed_gets_no_interval_and_one_of_ours_alone_no_row() -> None:
    table = {"hopper": {"ours": {0: 1.0}, "sb3": {0: 2.0, 1: 3.0}},
             "factor": {"ours": {0: 1.0, 1: 2.0}, "sb3": {}}}  # fmt: skip
    (row,) = stats.compare(table, REPS)
    assert row["verdict"] == "needs >= 2 seeds per side" and "iqm" not in row


@pytest.fixture
def rliable():
    return pytest.importorskip(
        "rliable.metrics", reason="rliable is in the peers venv (benchmarks/peers/setup.sh)"
    )


def test_probability_of_improvement_is_rliables(rliable) -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        x = rng.integers(0, 4, (rng.integers(2, 6), 3)).astype(float)  # ties on purpose
        y = rng.integers(0, 4, (rng.integers(2, 6), 3)).astype(float)
        (got,) = stats.probability_of_improvement(x[None], y[None])
        assert got == pytest.approx(rliable.probability_of_improvement(x, y), abs=1e-12)


def test_iqm_is_rliables(rliable) -> None:
    rng = np.random.default_rng(1)
    for runs in (3, 4, 5, 10):
        x = rng.normal(size=(runs, 2))
        assert stats.iqm(x[None])[0] == pytest.approx(rliable.aggregate_iqm(x), abs=1e-12)


@pytest.mark.parametrize("runs, tasks", [(3, 1), (10, 3)])
def test_intervals_are_rliables(rliable, runs: int, tasks: int) -> None:
    # rliable's own stratified bootstrap (one statistic call per resample) against ours (all
    # resamples at once): the same percentile interval up to resampling noise, which is none
    # where few runs leave few distinct resamples.
    from rliable import library

    improvement = stats.probability_of_improvement
    rng = np.random.default_rng(runs)
    x, y = rng.normal(size=(runs, tasks)), rng.normal(0.5, size=(runs, tasks))
    generator = np.random.RandomState(0)
    iqm_point, iqm_interval = library.get_interval_estimates(
        {"x": x}, lambda a: np.array([rliable.aggregate_iqm(a)]), reps=REPS,
        random_state=generator,
    )  # fmt: skip
    poi_point, poi_interval = library.get_interval_estimates(
        {"x": [x, y]}, rliable.probability_of_improvement, reps=REPS, random_state=generator
    )
    for theirs_point, theirs_interval, ours in (
        (iqm_point, iqm_interval, stats.bootstrap_interval(stats.iqm, [x], REPS)),
        (poi_point, poi_interval, stats.bootstrap_interval(improvement, [x, y], REPS)),
    ):
        assert ours[0] == pytest.approx(np.ravel(theirs_point["x"])[0], abs=1e-12)
        spread = np.ptp(np.concatenate([x, y]))
        assert ours[1:] == pytest.approx(np.ravel(theirs_interval["x"]), abs=0.03 * spread)


def test_a_run_that_never_reached_the_threshold_loses_every_pair_and_has_no_iqm() -> None:
    both = {"ours": {0: -2000.0, 1: -1000.0}, "sb3": {0: -np.inf, 1: -3000.0}}
    (row,) = stats.compare({"cartpole": both}, REPS)
    assert "iqm" not in row  # a run that never reached it has no place in a mean
    assert row["p_improvement"][0] == 1.0  # every run of ours needed fewer steps


def test_intervals_and_verdicts_on_known_seeds() -> None:
    high = {s: 100.0 + s for s in range(5)}
    low = {s: 10.0 + s for s in range(5)}
    mixed = {0: 5.0, 1: 120.0, 2: 15.0, 3: 110.0, 4: 50.0}
    table = {
        "ahead": {"ours": high, "sb3": low},
        "behind": {"ours": low, "sb3": high},
        "overlap": {"ours": mixed, "sb3": {s: 50.0 + s for s in range(5)}},
    }
    rows = {row["entry"]: row for row in stats.compare(table, REPS)}
    assert rows["ahead"]["verdict"] == "ahead"
    assert rows["ahead"]["p_improvement"] == (1.0, 1.0, 1.0)
    assert rows["behind"]["verdict"] == "behind"
    assert rows["overlap"]["verdict"] == "no clear difference"
    iqm, lo, hi = rows["ahead"]["iqm"]["ours"]
    assert iqm == pytest.approx(102.0)  # the middle half of 100..104 (scipy trim_mean)
    assert lo <= iqm <= hi and 100.0 <= lo and hi <= 104.0
    # over all entries: one entry ahead, one behind, one unclear -> unclear
    assert rows["all entries"]["verdict"] == "no clear difference"
    assert "| ahead | 5 / 5 |" in stats.markdown(list(rows.values()), "final")


def test_the_same_records_give_the_same_intervals_whatever_the_global_generator_holds() -> None:
    rng = np.random.default_rng(5)
    ours, sb3 = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    intervals = []
    for state in (1, 2):
        np.random.seed(state)
        intervals.append(
            (
                stats.bootstrap_interval(stats.probability_of_improvement, [ours, sb3], REPS),
                stats.bootstrap_interval(stats.iqm, [ours], REPS),
            )
        )
    assert intervals[0] == intervals[1]
