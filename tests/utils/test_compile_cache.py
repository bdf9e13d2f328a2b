"""The persistent XLA compile cache (`rl.utils.compile_cache`), with real TensorFlow processes:

- a process publishes its compiled program when it exits, and the next process loads it
  (TensorFlow's own log line says so) instead of compiling;
- a process killed with SIGKILL after compiling publishes nothing, and the next process removes
  its private directory (whose entries TensorFlow may have been writing) and runs;
- `RL_XLA_CACHE=off` turns it off; a user's own cache directory in TF_XLA_FLAGS is left alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rl.utils import compile_cache

REPO_ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """
import os, sys
from rl.utils import compile_cache
print("private", compile_cache.enable(), flush=True)
import tensorflow as tf
@tf.function(jit_compile=True)
def f(x):
    return tf.reduce_sum(tf.sin(x) * float(sys.argv[1]))
print("value", f(tf.ones([3])).numpy(), flush=True)
if sys.argv[2:] == ["die"]:
    os.kill(os.getpid(), 9)
"""
LOADED = "Loading cached entry for"


def _run(cache: Path, scale: str, *extra: str, env: dict | None = None):
    environment = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "RL_XLA_CACHE": str(cache),
        "CUDA_VISIBLE_DEVICES": "",
        "TF_CPP_MIN_LOG_LEVEL": "0",
        "TF_CPP_VMODULE": "device_executable_persistor=1",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, scale, *extra],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _layout(cache: Path) -> tuple[list[str], list[str]]:
    """(published entry names, private directory names) of the one host/TF cache."""
    [root] = cache.iterdir()
    entries = sorted(p.name for p in root.iterdir() if p.suffix == ".pb")
    private = sorted(p.name for p in root.iterdir() if p.is_dir())
    return entries, private


@pytest.mark.e2e  # the cache between real processes (exit, kill)
def test_an_exited_process_publishes_and_the_next_loads(tmp_path):
    cache = tmp_path / "cache"
    first = _run(cache, "3.0")
    assert first.returncode == 0, first.stderr
    assert LOADED not in first.stderr  # nothing to load yet: compiled
    entries, private = _layout(cache)
    assert len(entries) == 1 and private == []  # published at exit, private dir removed
    second = _run(cache, "3.0")
    assert second.returncode == 0, second.stderr
    assert LOADED in second.stderr  # TensorFlow loaded the executable
    assert "value 7.57323" in second.stdout  # 3 * 3 * sin(1)
    assert _layout(cache) == (entries, [])  # nothing new to publish


@pytest.mark.e2e  # the cache between real processes (exit, kill)
def test_a_killed_process_publishes_nothing_and_is_cleaned_up(tmp_path):
    cache = tmp_path / "cache"
    assert _run(cache, "3.0").returncode == 0
    entries, _ = _layout(cache)
    killed = _run(cache, "4.0", "die")  # compiles a new program, then SIGKILL
    assert killed.returncode == -9 and "value 10.09765" in killed.stdout
    after_kill, private = _layout(cache)
    assert after_kill == entries  # the shared cache did not see the new program
    assert len(private) == 1  # the dead process's private dir, with its own entries
    # Its entries may be half written: the next process never reads them.
    [root] = cache.iterdir()
    for entry in (root / private[0]).iterdir():
        entry.write_bytes(entry.read_bytes()[:100])  # as a kill mid-write leaves them
    following = _run(cache, "4.0")
    assert following.returncode == 0, following.stderr
    assert LOADED not in following.stderr  # compiled afresh
    entries_now, private_now = _layout(cache)
    assert private_now == [] and len(entries_now) == len(entries) + 1


@pytest.mark.e2e  # the cache between real processes (exit, kill)
def test_off_and_a_users_own_cache_are_respected(tmp_path):
    off = _run(tmp_path / "cache", "3.0", env={"RL_XLA_CACHE": "off"})
    assert off.returncode == 0 and "private None" in off.stdout
    assert not (tmp_path / "cache").exists()
    own = tmp_path / "own"
    mine = _run(
        tmp_path / "cache",
        "3.0",
        env={"TF_XLA_FLAGS": f"{compile_cache.FLAG}={own}"},
    )
    assert mine.returncode == 0 and "private None" in mine.stdout
    assert len(list(own.iterdir())) == 1 and not (tmp_path / "cache").exists()


CHILD = """
import os, sys
import tensorflow as tf
print("flags", os.environ.get("TF_XLA_FLAGS", ""), flush=True)
print("value", tf.function(lambda: tf.constant(5.0) * 2.0, jit_compile=True)().numpy())
"""
PARENT = """
import os, subprocess, sys
from rl.utils import compile_cache
private = compile_cache.enable()
import tensorflow as tf
tf.function(lambda: tf.constant(3.0) + 1.0, jit_compile=True)()  # the runtime reads the flag
compile_cache.activate()  # as the loop does once the engine is built
child = subprocess.run([sys.executable, "-c", sys.argv[1]], capture_output=True, text=True)
print(child.stdout, flush=True)
print("private entries", len(list(private.iterdir())), flush=True)
"""


@pytest.mark.e2e  # the cache between real processes (exit, kill)
def test_processes_started_after_activate_do_not_inherit_the_directory(tmp_path):
    """A subprocess of an rl process never writes into that process's private directory."""
    cache = tmp_path / "cache"
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "RL_XLA_CACHE": str(cache)}
    environment.pop("TF_XLA_FLAGS", None)
    parent = subprocess.run(
        [sys.executable, "-c", PARENT, CHILD],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert parent.returncode == 0, parent.stderr
    assert "flags \n" in parent.stdout and "value 10.0" in parent.stdout  # no cache flag
    assert "private entries 1" in parent.stdout  # the parent's program only
    entries, private = _layout(cache)
    assert len(entries) == 1 and private == []  # the parent published its one program


def test_eviction_keeps_the_newest_entries(tmp_path):
    for index, size in enumerate((300, 300, 300)):
        entry = tmp_path / f"e{index}.pb"
        entry.write_bytes(b"x" * size)
        os.utime(entry, (1000 + index, 1000 + index))
    compile_cache.evict(tmp_path, max_bytes=650)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e1.pb", "e2.pb"]
