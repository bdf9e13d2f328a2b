"""Runs a command and measures its whole process tree: wall and CPU seconds, peak memory, and the
machine's load while it ran.

A benchmark cell is a process that may start others (env workers, compilers), so CPU seconds
and memory are the tree's, not one process's. The exact figures come from `wait4` when the
command ends (CPU of the process and every descendant it waited for; the largest single
process's peak RSS). While it runs, a sampler reads /proc every few seconds (the tree's summed
RSS, its CPU so far, the 1-minute load average) and rewrites an attempt file, so an attempt cut
short by a kill still leaves what it measured up to its last sample. Linux only (/proc, prctl).

Standard library only: the campaign runner imports this under any venv.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child: SIGKILL when the runner dies, so a killed runner leaves no orphan cell."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _stat(pid: int) -> tuple[int, float, int] | None:
    """(parent pid, CPU seconds incl. reaped children, RSS bytes) of a live process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    ppid = int(fields[1])
    cpu = sum(int(x) for x in fields[11:15]) / TICKS  # utime, stime, cutime, cstime
    return ppid, cpu, int(fields[21]) * PAGE


def tree_usage(root: int) -> tuple[float, int, int]:
    """(CPU seconds, summed RSS bytes, process count) of `root` and its live descendants."""
    stats: dict[int, tuple[int, float, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := _stat(int(entry))) is not None:
            stats[int(entry)] = found
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    cpu, rss, count, todo = 0.0, 0, 0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            cpu, rss, count = cpu + stats[pid][1], rss + stats[pid][2], count + 1
            todo += children.get(pid, [])
    return cpu, rss, count


def load_1min() -> float:
    return os.getloadavg()[0]


def run_metered(
    cmd: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    log: Path,
    attempt_file: Path,
    others: Callable[[], set[str]] = set,
    every: float = 2.0,
    facts: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Runs `cmd` (output appended to `log`), returns this attempt's measurements and keeps
    `attempt_file` up to date with them. `others`: the ids of cells running beside it now.
    `facts`: what is known at the start (the git revision), kept even if the runner is killed."""
    attempt: dict[str, Any] = {
        **(facts or {}),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "complete": False,
        "wall_seconds": 0.0,
        "cpu_seconds": 0.0,
        "peak_tree_rss_mb": 0.0,
        "load_1min": {"start": round(load_1min(), 2), "max": 0.0, "samples": []},
        "concurrent_cells": sorted(others()),
    }
    start = time.monotonic()

    def save() -> None:
        tmp = attempt_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(attempt))
        os.replace(tmp, attempt_file)

    def sample(pid: int) -> None:
        cpu, rss, _ = tree_usage(pid)
        load = round(load_1min(), 2)
        attempt["wall_seconds"] = round(time.monotonic() - start, 2)
        attempt["cpu_seconds"] = max(attempt["cpu_seconds"], round(cpu, 2))
        attempt["peak_tree_rss_mb"] = max(attempt["peak_tree_rss_mb"], round(rss / 2**20, 1))
        attempt["load_1min"]["samples"].append(load)
        attempt["load_1min"]["max"] = max(attempt["load_1min"]["max"], load)
        attempt["concurrent_cells"] = sorted(set(attempt["concurrent_cells"]) | others())
        save()

    save()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent,
        )  # fmt: skip
    stop = threading.Event()

    def sampler() -> None:
        while not stop.wait(every):
            sample(proc.pid)

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        proc.kill()
        raise
    finally:
        stop.set()
        thread.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    attempt.update(
        complete=True,
        returncode=proc.returncode,
        wall_seconds=round(time.monotonic() - start, 2),
        cpu_seconds=round(usage.ru_utime + usage.ru_stime, 2),
        max_process_rss_mb=round(usage.ru_maxrss / 1024, 1),  # KiB on Linux
    )
    attempt["load_1min"]["end"] = round(load_1min(), 2)
    attempt["concurrent_cells"] = sorted(set(attempt["concurrent_cells"]) | others())
    save()
    return attempt
