"""rl's own env modules in the peers venv, which has no TensorFlow, so that SB3 steps the very
envs our side steps: LegalMoves-v0 (rl/envs/legal_moves.py), the Fetch tasks with rl's fix for
gymnasium-robotics on MuJoCo 4 (rl/envs/robotics.py, rl/utils/private_apis.py), and the
`minigrid/...` tasks as rl builds them (rl/envs/minigrid.py: image and direction, no mission),
registered with gymnasium under rl's names.

`rl/__init__` and `rl/envs/__init__` import TensorFlow; they are stood in by empty packages
(as tests/utils/test_run_dir_lock.py's PRELUDE does), so only the named modules and what they
import themselves (rl.registry, rl.errors: the standard library) load.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types
from pathlib import Path

import gymnasium as gym

ROOT = Path(__file__).resolve().parents[2]


def import_rl_module(name: str) -> types.ModuleType:
    """`importlib.import_module(name)` for a module of rl/ without its packages' __init__."""
    parts = name.split(".")
    for depth in range(1, len(parts)):
        package_name = ".".join(parts[:depth])
        if package_name not in sys.modules:
            package = types.ModuleType(package_name)
            package.__path__ = [str(ROOT.joinpath(*parts[:depth]))]
            sys.modules[package_name] = package
    return importlib.import_module(name)


def register_env(env_id: str) -> None:
    """Registers `env_id` with gymnasium where rl defines it (nothing for gymnasium's own ids)."""
    if env_id == "LegalMoves-v0":
        import_rl_module("rl.envs.legal_moves")
    elif env_id in import_rl_module("rl.envs.robotics").TASKS:
        import_rl_module("rl.envs.robotics").register_robotics_ids()
    elif env_id in (minigrid := import_rl_module("rl.envs.minigrid")).TASKS:
        if env_id not in gym.registry:
            gym.register(env_id, functools.partial(minigrid.make_minigrid, minigrid.TASKS[env_id]))
