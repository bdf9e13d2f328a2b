"""benchmarks/algorithm_table.py's bookkeeping (no training): medians with seeds that did not
reach the threshold, missing/partial/stale rows said out loud, the cache key."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from benchmarks import algorithm_table as at
from benchmarks import pages
from benchmarks.algorithm_records import (
    Side,
    changed_values,
    key,
    latest,
    needs_rerun,
    render_runs,
    render_status,
    wanted_key,
)
from benchmarks.algorithm_rows import PROTOCOL, ROWS, Row, overrides
from benchmarks.campaign import PEERS_PYTHON

ROOT = Path(__file__).resolve().parents[1]


ROW = Row("dqn_acrobot", "dqn", "Acrobot-v1", 100_000, 100_000)


def record(side, seed, solved, steps, wall, final, status="ok", lr=1e-3, budget=100_000):
    return {
        "side": side,
        "set": ROW.set,
        "env": ROW.env,
        "seed": seed,
        "budget": budget,
        "protocol": PROTOCOL[ROW.env],
        "status": status,
        "solved": solved,
        "env_steps_to_threshold": steps if solved else None,
        "wall_seconds_to_threshold": wall if solved else None,
        "final_eval_mean": final,
        "env_steps_total": steps if solved else budget,
        "wall_seconds_total": wall,
        "process_seconds": wall + 5,
        "cpu_seconds": wall,
        "hparams_values": {"lr": lr, "removed_key": 1} if side == "ours" else None,
        "machine_before": {"loadavg": [1.0, 1.0, 1.0], "time_utc": "2026-11-22T01:00:00Z"},
        "machine_after": {"loadavg": [2.0, 1.0, 1.0], "time_utc": "2026-11-22T01:01:00Z"},
    }


def side(records, missing=()):
    return Side(records, list(missing), [], False)


def test_median_counts_a_seed_that_did_not_reach_the_threshold_as_slowest():
    two_of_three = side(
        [
            record("ours", 0, True, 10_000, 10.0, -90.0),
            record("ours", 1, True, 30_000, 40.0, -95.0),
            record("ours", 2, False, 0, 99.0, -150.0),
        ]
    )
    assert two_of_three.median("env_steps_to_threshold") == 30_000
    assert two_of_three.median("wall_seconds_to_threshold") == 40.0
    assert two_of_three.solved() == 2
    # mean and population std of -90, -95, -150: -111.67 and 27.18
    assert two_of_three.final() == "-111.7 ± 27.2"
    one_of_three = side(
        two_of_three.records[:1] + [record("ours", s, False, 0, 9, -400) for s in (1, 2)]
    )
    assert one_of_three.median("env_steps_to_threshold") is None


def test_status_names_missing_partial_failed_and_stale_rows():
    results = [
        record("ours", 0, True, 10_000, 10.0, -90.0, lr=2e-3),
        record("ours", 1, True, 20_000, 20.0, -92.0),
        record("ours", 2, False, 0, 0.0, None, status="timeout"),
        record("sb3", 0, True, 40_000, 80.0, -95.0),
        record("sb3", 1, True, 50_000, 100.0, -97.0),
    ]
    other = Row("ppo_acrobot", "ppo", "Acrobot-v1", 500_000, 1_000_000)
    budgets = {ROW.set: ROW.budget, other.set: other.budget}
    current = {ROW.set: {"lr": 1e-3, "new_key": 0}, other.set: None}
    text = render_status([ROW, other], [0, 1, 2], budgets, results, current)
    line = next(x for x in text.splitlines() if x.startswith("dqn_acrobot"))
    assert "ours 2, SB3 2 of 3 seeds" in line
    assert "SB3: seeds 2 not run (partial)" in line
    assert "ours: seed 2 timeout" in line
    # the one value that changed is named; keys only one side has are not a change
    assert "STALE, the set changed since measured (lr: 0.002 -> 0.001)" in line
    other_line = next(x for x in text.splitlines() if x.startswith("ppo_acrobot"))
    assert "ours: not run; SB3: not run" in other_line
    runs = render_runs([ROW, other], [0, 1, 2], budgets, results)
    assert re.search(r"\| `dqn_acrobot` \| SB3 \| 1 \| 50,000 \| 100\.0 \|", runs)
    assert len(runs.splitlines()) == 4 + 5  # heading, blank, header, rule; five runs


def test_results_for_another_budget_or_protocol_are_not_reused():
    cache = latest([record("ours", 0, True, 10_000, 10.0, -90.0)])
    assert wanted_key("ours", ROW, 0, 100_000) in cache
    assert wanted_key("ours", ROW, 0, 50_000) not in cache
    assert wanted_key("sb3", ROW, 0, 100_000) not in cache
    changed = {**record("ours", 0, True, 1, 1.0, 0.0), "protocol": {"every": 1}}
    assert key(changed) != wanted_key("ours", ROW, 0, 100_000)


def test_protocol_reaches_train_py_as_overrides():
    assert overrides("Pendulum-v1", 30_000) == (
        "stop_at_eval_return=-200.0,eval.every_steps=2000,eval.episodes=5,train_steps=30000"
    )
    assert {row.env for row in ROWS} <= set(PROTOCOL)


def test_every_row_has_a_zoo_entry_for_the_sb3_side():
    # The SB3 side reads each row's entry from the installed rl-zoo3 (benchmarks/peers/
    # sb3_solve.py), which only the peers venv has; a row's zoo_steps is the entry's n_timesteps.
    if not PEERS_PYTHON.exists():
        pytest.skip("the peers venv .venv-peers is absent: benchmarks/peers/setup.sh builds it")
    read = (
        "import json, sys; from benchmarks.peers.sb3_solve import ZOO; "
        "print(json.dumps([ZOO[tuple(pair)]['n_timesteps'] for pair in json.loads(sys.argv[1])]))"
    )
    pairs = json.dumps([(row.algo, row.env) for row in ROWS])
    proc = subprocess.run(
        [str(PEERS_PYTHON), "-c", read, pairs], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    steps = json.loads(proc.stdout.splitlines()[-1])
    assert steps == [row.zoo_steps for row in ROWS]


def test_a_failed_or_stale_run_is_redone_a_timeout_is_not():
    current = {"lr": 1e-3, "new_key": 0}
    assert not needs_rerun(record("ours", 0, True, 1, 1.0, 0.0), current)
    assert needs_rerun(record("ours", 0, True, 1, 1.0, 0.0, lr=2e-3), current)
    assert needs_rerun(record("ours", 0, False, 1, 1.0, None, status="failed"), current)
    assert not needs_rerun(record("ours", 0, False, 1, 1.0, None, status="timeout"), current)
    assert not needs_rerun(record("sb3", 0, True, 1, 1.0, 0.0), None)


def test_a_full_budget_row_trains_past_the_threshold_and_finds_where_it_crossed():
    assert overrides("HalfCheetah-v5", 300_000, full_budget=True) == (
        "eval.every_steps=10000,eval.episodes=10,train_steps=300000"
    )
    history = [{"step": s, "mean": m, "wall": s / 100} for s, m in ((10_048, 900.0),
               (20_032, 5_000.0), (30_016, 4_000.0), (40_000, 6_000.0))]  # fmt: skip
    assert at.first_at_threshold(history, 4_800.0)["step"] == 20_032
    assert at.first_at_threshold(history, 9_000.0) is None
    # ours evaluates at the first update boundary past a multiple, SB3 at it
    assert pages.eval_at(history, 20_000, 10_000) == "5,000"
    assert pages.eval_at(history, 50_000, 10_000) == "-"


def test_a_later_spelling_of_the_same_setting_is_not_a_change():
    assert changed_values(
        {"tau": 0.005, "jit_compile": True, "lr": 1e-3},
        {"tau": "constant(0.005)", "jit_compile": "auto", "lr": 3e-4},
    ) == ["lr: 0.001 -> 0.0003"]
    assert changed_values({"jit_compile": False}, {"jit_compile": "auto"})
