"""The record a measurement tool writes (throughput, compiled_ppo, ...): one JSON line per run in
benchmarks/results/tools/TOOL.jsonl, beside what the tool prints.

A timing means nothing without the machine, the code and the load it was taken under (rule:
every figure has a record), so each line holds the tool's settings and results with the CPU
(model and flags), the git revision (dirty or not), package versions, the load average when it
ended and the CPU seconds of the tool and of the processes it waited for (several tools time
train.py subprocesses). Nothing renders these lines into a page yet; a figure quoted in docs
must come from one of them.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.machine_info import ROOT, cpu, git_state, package_versions

RESULTS = ROOT / "benchmarks" / "results" / "tools"


def append(tool: str, settings: dict[str, Any], results: Any, folder: Path = RESULTS) -> Path:
    """Appends one run of `tool` (its settings and results) to `folder`/TOOL.jsonl; the path."""
    own, waited = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    record = {
        "tool": tool,
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": [Path(sys.argv[0]).name, *sys.argv[1:]],
        "settings": settings,
        "results": results,
        "cpu_seconds": round(sum(u.ru_utime + u.ru_stime for u in (own, waited)), 2),
        "load_1min": round(os.getloadavg()[0], 2),
        "machine": cpu(),
        "git": git_state(),
        "versions": package_versions(sys.executable),
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{tool}.jsonl"
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")
    return path
