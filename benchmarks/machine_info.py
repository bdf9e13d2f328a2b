"""What a benchmark record says about where and with what it ran: the CPU (model, flags, cores
this process may use), memory, kernel, the git revision (and whether the tree had uncommitted
changes, with their hash), and the versions of the packages a side ran with.

Numbers from two machines, or from two states of the code, are not comparable; a record that
names both lets a reader tell. Standard library only: the campaign runner imports this under
any venv.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OURS_PACKAGES = ("tensorflow", "tensorflow-probability", "numpy", "gymnasium", "mujoco",
                 "ale-py", "box2d")  # fmt: skip


def cpu() -> dict[str, Any]:
    """The CPU model and flags (/proc/cpuinfo), the cores usable here, memory and kernel."""
    model, flags = "?", ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name" and model == "?":
                model = value.strip()
            elif name.strip() in ("flags", "Features") and not flags:
                flags = value.strip()
    except OSError:
        pass
    memory_kb = 0
    try:
        meminfo = Path("/proc/meminfo").read_text().split()
        memory_kb = int(meminfo[meminfo.index("MemTotal:") + 1])
    except (OSError, ValueError):
        pass
    return {
        "model": model,
        "flags": flags,
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)),
        "memory_gb": round(memory_kb / 2**20, 1),
        "kernel": platform.release(),
        "machine": platform.machine(),
    }


def git_state() -> dict[str, Any]:
    """HEAD's revision, and whether the tree differs from it: tracked files changed (with the
    diff's hash) or files git does not know and does not ignore."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout

    diff = git("diff", "HEAD")
    untracked = git("ls-files", "--others", "--exclude-standard").split()
    return {
        "revision": git("rev-parse", "HEAD").strip() or None,
        "dirty": bool(diff or untracked),
        "diff_sha256": hashlib.sha256(diff.encode()).hexdigest()[:16] if diff else None,
        "untracked_files": len(untracked),
    }


def package_versions(python: str, packages: tuple[str, ...] = OURS_PACKAGES) -> dict[str, str]:
    """Versions of `packages` installed for the interpreter `python` (without importing them)."""
    script = (
        "import importlib.metadata as m, json, platform, sys\n"
        "found = {'python': platform.python_version()}\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        found[name] = m.version(name)\n"
        "    except m.PackageNotFoundError:\n"
        "        pass\n"
        "print(json.dumps(found))\n"
    )
    proc = subprocess.run([python, "-c", script, *packages], capture_output=True, text=True)
    return json.loads(proc.stdout) if proc.returncode == 0 else {"error": proc.stderr[-500:]}
