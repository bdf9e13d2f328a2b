"""A persistent XLA compile cache that a killed run cannot corrupt.

TensorFlow's own persistent cache writes each entry in place, so a process killed mid-write
leaves a truncated file that fails every later run needing that program. Here TensorFlow writes
only to a private directory linking the published entries; at a normal exit each new entry is
copied into the shared cache under a temporary name and renamed. A killed process publishes
nothing (docs/compiled.md, "The compile cache").
"""

from __future__ import annotations

import atexit
import hashlib
import os
import platform
import shutil
import socket
import tempfile
from pathlib import Path

from rl.utils.processes import pid_alive

ENV_VAR = "RL_XLA_CACHE"
FLAG = "--tf_xla_persistent_cache_directory"
MAX_BYTES = 2 * 1024**3
_PRIVATE_PREFIX = "private-"

PRIVATE_VAR = "RL_XLA_CACHE_PRIVATE"  # the flag's directory: a child knows it inherited it
_private: Path | None = None


def cache_root() -> Path | None:
    """The shared cache of this TF version and CPU, or None when `RL_XLA_CACHE=off`."""
    setting = os.environ.get(ENV_VAR, "")
    if setting.lower() in ("off", "0", "false", "no"):
        return None
    base = Path(setting) if setting else Path.home() / ".cache" / "rl" / "xla"
    return base / _host_key()


def _host_key() -> str:
    """TF version + a digest of the CPU's model and flags: entries are machine code."""
    import tensorflow as tf

    cpu = platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            lines = [ln for ln in info if ln.startswith(("model name", "flags"))][:2]
        cpu += "".join(lines)
    except OSError:
        pass
    return f"tf-{tf.__version__}-{hashlib.sha256(cpu.encode()).hexdigest()[:12]}"


def enable() -> Path | None:
    """Points TensorFlow's persistent XLA cache at a fresh private directory linked to the shared
    cache; this process's new entries are published at exit. Call before TensorFlow's runtime starts
    (it reads TF_XLA_FLAGS once). None when the cache is off, user-set, or cannot be created."""
    global _private
    if _private is not None:
        return _private
    flags = _without_inherited(os.environ.get("TF_XLA_FLAGS", ""))
    if FLAG in flags:
        return None  # the user set their own cache (TensorFlow uses it as it is)
    root = cache_root()
    if root is None:
        return None
    try:
        root.mkdir(parents=True, exist_ok=True)
        remove_abandoned(root)
        prefix = f"{_PRIVATE_PREFIX}{socket.gethostname()}-{os.getpid()}-"
        private = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
        for entry in _entries(root):
            try:
                os.link(entry, private / entry.name)
            except OSError:
                (private / entry.name).symlink_to(entry)
    except OSError:
        return None  # a read-only or full disk: compile as if there were no cache
    os.environ["TF_XLA_FLAGS"] = f"{flags} {FLAG}={private}".strip()
    os.environ[PRIVATE_VAR] = str(private)
    atexit.register(publish, private, root)
    _private = private
    return private


def activate() -> None:
    """Takes this process's cache flag out of the environment once TensorFlow has read it, so
    processes started from here on do not write into this process's directory."""
    flags = _without_inherited(os.environ.get("TF_XLA_FLAGS", ""))
    if flags:
        os.environ["TF_XLA_FLAGS"] = flags
    else:
        os.environ.pop("TF_XLA_FLAGS", None)
    os.environ.pop(PRIVATE_VAR, None)


def _without_inherited(flags: str) -> str:
    private = os.environ.get(PRIVATE_VAR)
    if not private:
        return flags
    return " ".join(part for part in flags.split() if part != f"{FLAG}={private}")


def publish(private: Path, root: Path) -> list[str]:
    """Moves the complete entries of `private` that `root` lacks into it (temporary name, then
    rename), removes `private`, evicts beyond `MAX_BYTES`; returns the names published."""
    published = []
    try:
        for entry in _entries(private):
            target = root / entry.name
            if target.exists() or entry.is_symlink() or entry.stat().st_nlink > 1:
                continue  # linked from the shared cache, or published meanwhile by another
            temporary = root / f".{entry.name}.{os.getpid()}.tmp"
            shutil.copyfile(entry, temporary)
            with open(temporary, "rb") as handle:
                os.fsync(handle.fileno())
            os.replace(temporary, target)
            published.append(entry.name)
        evict(root, MAX_BYTES)
    except OSError:
        pass  # a full disk: the entries are lost, the cache stays consistent
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return published


def remove_abandoned(root: Path) -> None:
    """Removes the private directories (and temporary files) of this host's dead processes."""
    host = socket.gethostname()
    for path in root.iterdir():
        owner = _owner(path.name)
        if owner is None or owner[0] != host or pid_alive(owner[1]):
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def evict(root: Path, max_bytes: int) -> None:
    """Deletes the least recently modified entries until the cache holds <= `max_bytes`."""
    entries = sorted(_entries(root), key=lambda p: p.stat().st_mtime)
    total = sum(p.stat().st_size for p in entries)
    for entry in entries:
        if total <= max_bytes:
            break
        total -= entry.stat().st_size
        entry.unlink(missing_ok=True)


def _entries(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.endswith(".pb") and not p.name.startswith(".")]


def _owner(name: str) -> tuple[str, int] | None:
    """(host, pid) of a private directory or temporary file name, else None."""
    if name.startswith(_PRIVATE_PREFIX):
        host, _, rest = name[len(_PRIVATE_PREFIX) :].rpartition("-")
        host, _, pid = host.rpartition("-")
        return (host, int(pid)) if pid.isdigit() else None
    if name.startswith(".") and name.endswith(".tmp"):
        pid = name.rsplit(".", 2)[-2]
        return (socket.gethostname(), int(pid)) if pid.isdigit() else None
    return None
