"""What a run was made with beyond its hparams: code, packages, TF determinism, devices, CPU and
the env's spec, the facts that decide whether two runs *can* be bit-identical. Every function
answers plain JSON and never raises on a missing tool: a fact that cannot be read is None
rather than a stopped run.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
from typing import Any

import tensorflow as tf

from rl.utils import private_apis

# Environment variables that change which kernels TensorFlow (and XLA) pick.
DETERMINISM_ENV_VARS = (
    "TF_DETERMINISTIC_OPS",
    "TF_CUDNN_DETERMINISTIC",
    "TF_ENABLE_ONEDNN_OPTS",
    "TF_XLA_FLAGS",
    "XLA_FLAGS",
    "CUDA_VISIBLE_DEVICES",
    "PYTHONHASHSEED",
)


def _git(args: list[str], cwd: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None


def git_state(path: str) -> dict[str, Any]:
    """The commit of the git tree holding `path`, whether tracked files differ (as `git describe
    --dirty`), a sha256 of the difference and the untracked file count; all None outside git."""
    state: dict[str, Any] = dict.fromkeys(("revision", "dirty", "diff_sha256", "untracked_files"))
    head = _git(["rev-parse", "HEAD"], path)
    if head is None or head.returncode != 0:
        return state
    state["revision"] = head.stdout.decode().strip() or None
    diff = _git(["diff", "HEAD", "--binary", "--no-ext-diff", "--no-color"], path)
    if diff is not None and diff.returncode == 0:
        state["dirty"] = bool(diff.stdout)
        state["diff_sha256"] = hashlib.sha256(diff.stdout).hexdigest() if diff.stdout else None
    # ":/" is the tree's top: from a subdirectory (rl/utils/), the whole tree is counted.
    untracked = _git(["ls-files", "--others", "--exclude-standard", "--", ":/"], path)
    if untracked is not None and untracked.returncode == 0:
        state["untracked_files"] = len(untracked.stdout.splitlines())
    return state


def installed_packages() -> dict[str, str]:
    """Every installed distribution and its version (a full freeze), by normalized name."""
    from importlib import metadata

    packages: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:  # a broken install can leave a dist-info without a name
            packages.setdefault(name.lower().replace("_", "-"), dist.version)
    return dict(sorted(packages.items()))


def tf_determinism() -> dict[str, Any]:
    """TF's op-determinism switch, thread pools and the kernel-choosing environment variables."""
    return {
        "op_determinism": private_apis.op_determinism_enabled(),
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
        "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
        "env": {name: os.environ.get(name) for name in DETERMINISM_ENV_VARS},
    }


def devices() -> list[dict[str, Any]]:
    """The physical devices TF sees, with their details (GPU model, compute capability)."""
    out = []
    for device in tf.config.list_physical_devices():
        entry: dict[str, Any] = {"name": device.name, "type": device.device_type}
        if device.device_type != "CPU":
            try:
                details = tf.config.experimental.get_device_details(device)
            except (ValueError, RuntimeError):
                details = {}
            entry.update({k: _json_safe(v) for k, v in details.items()})
        out.append(entry)
    return out


def cpu() -> dict[str, Any]:
    """The CPU model (Linux: /proc/cpuinfo), architecture and core count."""
    names = ("model name", "hardware", "cpu model")
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            lines = (line for line in f if line.lower().startswith(names))
            model = next((line.split(":", 1)[1].strip() for line in lines), None)
    except OSError:
        model = None
    return {
        "model": model or platform.processor() or None,
        "machine": platform.machine(),
        "count": os.cpu_count(),
    }


def env_spec(env: str) -> dict[str, Any]:
    """Where `env` comes from and its registered version: gymnasium's spec, the rl factory, or the
    module of a `module:Class` env."""
    import gymnasium as gym

    from rl import registry

    out: dict[str, Any] = {"id": env, "source": None, "entry_point": None, "version": None}
    if env in registry.envs:
        factory = registry.envs.get(env)
        qualname = getattr(factory, "__qualname__", "?")
        return {**out, "source": "rl", "entry_point": f"{factory.__module__}:{qualname}"}
    if ":" in env and env.partition(":")[2] not in gym.registry:
        return {**out, "source": "module", "entry_point": env}
    gym_id = env.partition(":")[2] if ":" in env else env
    try:
        spec = gym.spec(gym_id)
    except Exception:  # gymnasium raises several error types for unknown or unloaded ids
        return out
    entry_point = spec.entry_point
    out["source"] = "gymnasium"
    out["entry_point"] = entry_point if isinstance(entry_point, str) else repr(entry_point)
    out["version"] = spec.version
    out["max_episode_steps"] = spec.max_episode_steps
    out["kwargs"] = _json_safe(spec.kwargs)
    return out


def _json_safe(value: Any) -> Any:
    """`value` as JSON data: containers kept, anything else that JSON cannot hold as its str."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    return str(value)
