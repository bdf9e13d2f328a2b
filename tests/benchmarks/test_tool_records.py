"""A measurement tool's run becomes one JSON line (benchmarks/tool_records.py) that names the
machine, the code and the load beside its settings and results, and a second run adds a line
instead of replacing the first."""

from __future__ import annotations

import json

from benchmarks import tool_records


def test_each_run_appends_one_record_naming_machine_code_and_load(tmp_path):
    settings = {"hparams": "dqn_cartpole", "repeats": 2}
    path = tool_records.append("throughput", settings, {"collect_env_steps_per_s": 1.5}, tmp_path)
    tool_records.append("throughput", settings, {"collect_env_steps_per_s": 2.5}, tmp_path)
    assert path == tmp_path / "throughput.jsonl"
    first, second = (json.loads(line) for line in path.read_text().splitlines())
    assert first["tool"] == "throughput" and first["settings"] == settings
    assert [first["results"], second["results"]] == [
        {"collect_env_steps_per_s": 1.5},
        {"collect_env_steps_per_s": 2.5},
    ]
    assert first["machine"]["model"] and first["machine"]["usable_cpus"] >= 1
    assert len(first["git"]["revision"]) == 40 and isinstance(first["git"]["dirty"], bool)
    assert first["versions"]["numpy"] and first["cpu_seconds"] > 0
    assert first["load_1min"] >= 0 and first["time_utc"].endswith("Z")
