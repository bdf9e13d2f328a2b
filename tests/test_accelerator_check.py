"""benchmarks/accelerator_check.py --smoke: the device check runs every part, so it cannot rot
between the rare runs on a GPU or TPU. The parts run in this process, in the slow tier (~60 s
of CPU here: a compiled PPO program per env count, a PPO agent per precision, two learners,
each compiled anew). What each part measures is checked in the default tier by its own tests
(test_train_smoke.py, test_precision.py, tests/compiled/); here only that the device script
still drives them. A failing part failing the check stays in the default tier."""

from __future__ import annotations

import json

import pytest

from benchmarks import accelerator_check


def run_smoke(tmp_path, capsys, *args: str) -> tuple[dict, str]:
    out = tmp_path / "check.json"
    status = accelerator_check.main(["--smoke", "--json", str(out), *args])
    printed = capsys.readouterr().out
    results = json.loads(out.read_text())
    assert status == 0, (results.get("errors"), printed)
    return results, printed


def check_engines(results: dict, names: list[str]) -> None:
    rows = results["engines"]
    assert [row["engine"] for row in rows] == names
    for row in rows:
        steps = accelerator_check.registry.get_hparams(row["set"])().train_steps
        # Trained to its steps, then resumed from that checkpoint to twice as many.
        assert row["ok"] and row["checkpoint_steps"] == [steps, 2 * steps], row


OTHER_PARTS = [part for part in accelerator_check.PARTS if part != "engines"]


@pytest.mark.slow
def test_smoke_runs_every_other_part_in_process(tmp_path, capsys):
    results, printed = run_smoke(tmp_path, capsys, "--parts", *OTHER_PARTS)
    assert results["devices"]["accelerator"] == "CPU:0"
    compiled = results["compiled_ppo"]
    assert [row["num_envs"] for row in compiled] == list(accelerator_check.SMOKE.compiled_envs)
    for row in compiled:
        # ppo_tf_tiny steps each env min(32, train_every=64) = 32 times per iteration.
        assert row["steps_per_iteration"] == 32 * row["num_envs"]
        assert row["env_steps_per_s"] > 0 and row["first_call_s"] > 0
    ppo = {row["precision"]: row for row in results["ppo_agent"]}
    assert set(ppo) == set(accelerator_check.PRECISIONS)
    for row in ppo.values():
        assert "skipped" in row or (row["agent_steps_per_s"] > 0 and 0 < row["share_in_tf"] <= 1)
    assert [row["set"] for row in results["learners"]] == ["dqn_tiny", "sac_tiny"]
    assert all(row["gradient_steps_per_s"] > 0 for row in results["learners"])
    kinds = {row["kind"]: row for row in results["model_kinds"]}
    assert set(kinds) == {"MLP", "CNN", "recurrent"}
    assert all(row["xla_ms_per_step"] > 0 and row["tf_ms_per_step"] > 0 for row in kinds.values())
    assert results["peak_memory"]["peak_mb"] > 100
    for header in ("compiled PPO envs", "PPO (Atari) precision", "model kind"):
        assert header in printed


# Slow (~70 s, ~50 of them Ray and actor start-ups): every engine trains and resumes through
# train.main, as tests/test_train_smoke.py, tests/test_resume*.py and (Ape-X, IMPALA on Ray
# actors) tests/workers check in the default and e2e tiers.
@pytest.mark.slow
def test_smoke_trains_and_resumes_every_engine(tmp_path, capsys):
    results, printed = run_smoke(tmp_path, capsys, "--parts", "engines")
    check_engines(results, [engine for engine, _, _ in accelerator_check.SMOKE.engines])
    assert "engine" in printed


def test_a_failing_part_is_reported_and_fails_the_check(tmp_path, capsys, monkeypatch):
    def broken() -> dict:
        raise RuntimeError("no device")

    monkeypatch.setattr(accelerator_check, "peak_memory_mb", broken)
    out = tmp_path / "check.json"
    status = accelerator_check.main(["--smoke", "--json", str(out), "--parts", "peak_memory"])
    assert status == 1
    assert "RuntimeError: no device" in json.loads(out.read_text())["errors"]["peak_memory"]
    assert "FAILED part peak_memory" in capsys.readouterr().out
