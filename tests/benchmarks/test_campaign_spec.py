"""A campaign file becomes cells (benchmarks/campaign_spec.py) and the runner's bookkeeping
(benchmarks/campaign.py) without training anything: which cells, their keys, their commands,
the totals over attempts, and where a cell's resume would start."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import pytest

from benchmarks import campaign
from benchmarks.campaign_spec import load


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return str(path)


ENTRY = """
budget = 20000
eval_every = 5000
checkpoint_every = 10000
seeds = [0, 1]

[[entry]]
env = "Hopper-v5"
ours = "td3_hopper"
sb3 = { algo = "td3", zoo_key = "Hopper-v4" }
"""


def test_every_entry_seed_and_side_is_a_cell(tmp_path: Path) -> None:
    name, _, cells = load(_write(tmp_path, ENTRY))
    assert name == "c"
    assert [c.id for c in cells] == [
        "td3_hopper/ours/seed0", "td3_hopper/sb3/seed0",
        "td3_hopper/ours/seed1", "td3_hopper/sb3/seed1",
    ]  # fmt: skip
    assert cells[0].eval_episodes == 10  # the default protocol: 10 episodes
    assert cells[1].agent == {"algo": "td3", "zoo_key": "Hopper-v4", "hyperparams": {},
                              "torch_threads": 1}  # fmt: skip


def test_a_changed_spec_is_a_new_cell_with_its_own_folder(tmp_path: Path) -> None:
    (a, *_), (b, *_) = load(_write(tmp_path, ENTRY))[2], load("tiny")[2]
    again = load(_write(tmp_path, ENTRY))[2][0]
    longer = load(_write(tmp_path, ENTRY.replace("20000", "30000")))[2][0]
    assert a.key == again.key and a.key != longer.key and a.key != b.key
    assert campaign.cell_dir(tmp_path, a) != campaign.cell_dir(tmp_path, longer)


def test_a_cell_another_campaign_recorded_is_reused_not_run(tmp_path: Path) -> None:
    # A factor campaign's SB3 side is the main campaign's cell: the same spec, the same key.
    results = tmp_path / "results"
    sb3 = load(_write(tmp_path, ENTRY))[2][1]
    factor_text = ENTRY.replace('ours = "td3_hopper"', 'name = "factor"\nours = "td3_hopper"')
    (factor_path := tmp_path / "factor.toml").write_text(factor_text)
    factor_sb3 = load(str(factor_path))[2][1]
    assert factor_sb3.key == sb3.key and factor_sb3.id == "factor/sb3/seed0"
    original = {"campaign": "c", "cell": sb3.id, "entry": "td3_hopper", "key": sb3.key,
                "status": "ok", "final_eval_mean": 1.5, "time_utc": "2026-12-03"}  # fmt: skip
    campaign.append_record(campaign.records_file(results, "c"), original)
    runner = campaign.Runner(results, tmp_path / "work", jobs=1)
    assert "reused c's record" in runner.run_cell(factor_sb3)
    (copy,) = campaign.read_records(campaign.records_file(results, "factor"))
    assert copy["cell"] == "factor/sb3/seed0" and copy["entry"] == "factor"
    assert copy["final_eval_mean"] == 1.5 and copy["reused_from"] == {
        "campaign": "c",
        "cell": sb3.id,
    }
    assert runner.run_cell(factor_sb3).endswith("already recorded")


@pytest.mark.parametrize(
    "text, message",
    [
        (ENTRY.replace("checkpoint_every = 10000", "checkpoint_every = 7000"), "multiple"),
        (ENTRY.replace('env = "Hopper-v5"', 'env = "Hopper-v5"\nbudgt = 3'), "unknown keys"),
        (ENTRY.replace("budget = 20000", ""), "no budget"),
        (ENTRY.replace("seeds = [0, 1]", 'seeds = [0]\nbaseline = "x"'), "baseline 'x'"),
    ],
)
def test_mistakes_in_a_campaign_file_are_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        load(_write(tmp_path, text))


def test_a_cell_another_campaign_is_running_is_left_to_it(tmp_path: Path) -> None:
    # A factor campaign's baseline cell with the spec of a main campaign's cell in progress: its
    # record will be reused once the main campaign's runner writes it, so it is not started twice.
    sb3 = load(_write(tmp_path, ENTRY))[2][1]
    (factor_path := tmp_path / "factor.toml").write_text(ENTRY)
    factor_sb3 = load(str(factor_path))[2][1]
    work = tmp_path / "work"
    running = campaign.cell_dir(work, sb3)
    running.mkdir(parents=True)
    with (running / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as the main campaign's runner holds it
        runner = campaign.Runner(tmp_path / "results", work, jobs=1)
        assert runner.run_cell(factor_sb3).endswith("running as c's cell, skipped")
        assert runner.others(factor_sb3) == {"c/td3_hopper/sb3/seed0"}


def test_commands_carry_the_protocol_and_continue_the_same_cell(tmp_path: Path) -> None:
    ours, sb3 = load(_write(tmp_path, ENTRY))[2][:2]
    folder = tmp_path / "cell"
    cmd = campaign.command(ours, folder)
    override = cmd[cmd.index("--hparam_override") + 1]
    assert "train_steps=20000" in override and "eval.every_steps=5000" in override
    assert "eval.episodes=10" in override and "checkpoint_every=10000" in override
    assert cmd[cmd.index("--output_dir") + 1] == str(folder / "run")
    cmd = campaign.command(sb3, folder)
    assert cmd[cmd.index("--zoo-key") + 1] == "Hopper-v4"
    assert cmd[cmd.index("--dir") + 1] == str(folder / "sb3")
    assert "--stop-at" not in cmd and "--horizon" not in cmd
    assert campaign.shown(str(campaign.PEERS_PYTHON), tmp_path) == "python"
    # a record names a cell folder under `--work` by that folder, not by this machine's path
    assert campaign.shown(str(folder / "sb3"), tmp_path) == "WORK/cell/sb3"


def test_a_threshold_and_the_zoo_horizon_reach_both_commands_and_the_key(tmp_path: Path) -> None:
    text = ENTRY.replace(
        'ours = "td3_hopper"', 'stop_at = 3800\nours = { set = "td3_hopper", env = "Hopper-v4" }'
    )
    text = text.replace('zoo_key = "Hopper-v4" }', 'zoo_key = "Hopper-v4", horizon = "zoo" }')
    ours, sb3 = load(_write(tmp_path, text))[2][:2]
    plain = load(_write(tmp_path, ENTRY))[2][0]
    assert ours.spec["stop_at"] == 3800.0 and "stop_at" not in plain.spec and ours.key != plain.key
    override = (cmd := campaign.command(ours, tmp_path))[cmd.index("--hparam_override") + 1]
    assert "stop_at_eval_return=3800.0" in override and override.startswith("env=Hopper-v4,")
    cmd = campaign.command(sb3, tmp_path)
    assert cmd[cmd.index("--stop-at") + 1] == "3800.0" and cmd[cmd.index("--horizon") + 1] == "zoo"
    # a cell that stopped at the threshold before its budget is finished; one short of it is not
    curve = [{"step": 5000, "mean": 100.0}, {"step": 10000, "mean": 3900.0}]
    assert campaign.finished(ours, {"env_steps": 10000, "eval_curve": curve})
    assert not campaign.finished(ours, {"env_steps": 10000, "eval_curve": curve[:1]})
    assert not campaign.finished(plain, {"env_steps": 10000, "eval_curve": curve})


def test_totals_add_attempts_up_and_a_checkpoint_says_where_a_resume_starts(
    tmp_path: Path,
) -> None:
    cell = load(_write(tmp_path, ENTRY))[2][1]  # sb3
    folder = tmp_path / "cell"
    assert campaign.checkpoint_step(folder, cell) is None
    (folder / "sb3" / "checkpoints").mkdir(parents=True)
    (folder / "sb3" / "checkpoints" / "latest.json").write_text('{"step": 10000}')
    assert campaign.checkpoint_step(folder, cell) == 10000
    killed = {"complete": False, "wall_seconds": 10.0, "cpu_seconds": 9.0,
              "peak_tree_rss_mb": 500.0, "concurrent_cells": ["x"],
              "load_1min": {"start": 1.0, "max": 3.0, "samples": [1.0, 3.0]}}  # fmt: skip
    finished = {**killed, "complete": True, "wall_seconds": 5.0, "cpu_seconds": 4.0,
                "peak_tree_rss_mb": 400.0, "max_process_rss_mb": 390.0, "concurrent_cells": [],
                "load_1min": {"start": 2.0, "max": 2.0, "samples": [2.0], "end": 2.0}}  # fmt: skip
    for i, attempt in enumerate((killed, finished)):
        (folder / f"attempt-{i}.json").write_text(json.dumps(attempt))
    total = campaign.summarize(campaign.attempts_of(folder))
    assert total["wall_seconds"] == 15.0 and total["cpu_seconds"] == 13.0
    assert total["peak_tree_rss_mb"] == 500.0 and total["resumes"] == 1
    assert total["load_1min"]["max"] == 3.0 and total["load_1min"]["mean"] == 2.0
    assert total["concurrent_cells"] == ["x"]
