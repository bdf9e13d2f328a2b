"""An rl-zoo3 entry turned into an SB3 model and its envs by rl-zoo3's own code.

The hyperparameters are read from the YAML files of the installed rl-zoo3 package, never copied
by hand, and go through rl-zoo3's `ExperimentManager` (schedules, `normalize`, action noise,
`policy_kwargs` strings, env wrappers, frame stacking), so the model is the one
`python -m rl_zoo3.train --algo ALGO --env ENV -n BUDGET` builds. Each build records where its
entry came from: rl-zoo3's version, the file's sha256 and the key read. The key is the env id, as
in rl-zoo3, unless a campaign names another one: rl-zoo3 2.9.2 lists MuJoCo under the v4 ids, so
a `HalfCheetah-v5` cell names `HalfCheetah-v4` to get the tuned entry instead of `default`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rl_zoo3
import yaml
from rl_zoo3 import ALGOS
from rl_zoo3.exp_manager import ExperimentManager
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv


@dataclass
class ZooBuild:
    """A model built from a zoo entry, with the manager that can build more of its envs."""

    model: BaseAlgorithm
    manager: ExperimentManager
    source: dict[str, Any]  # rl-zoo3 version, file, sha256, key, the entry as read, overrides

    def make_train_env(self) -> VecEnv:
        """A training VecEnv as the zoo builds it (same wrappers, seeds and normalization)."""
        with contextlib.redirect_stdout(sys.stderr):
            return self.manager.create_envs(self.manager.n_envs, no_log=True)

    def make_eval_env(self) -> VecEnv:
        """The zoo's evaluation env: one env, normalization statistics frozen, raw rewards."""
        with contextlib.redirect_stdout(sys.stderr):
            return self.manager.create_envs(1, eval_env=True, no_log=True)

    @property
    def deterministic_eval(self) -> bool:
        """The zoo's choice: greedy evaluation except on Atari and MiniGrid."""
        return bool(self.manager.deterministic_eval)


def zoo_file(algo: str) -> Path:
    """The installed rl-zoo3's hyperparameter file for `algo`."""
    return Path(rl_zoo3.__file__).parent / "hyperparams" / f"{algo}.yml"


def read_entry(algo: str, env_id: str, key: str | None = None) -> tuple[str, dict[str, Any]]:
    """(key, entry) from the installed zoo file: `key` if given, else the env id, else `atari`
    for an Atari env, else `default`, which is how rl-zoo3 chooses."""
    table = yaml.safe_load(zoo_file(algo).read_text())
    if key is None:
        if env_id in table:
            key = env_id
        elif ExperimentManager.is_atari(env_id) and "atari" in table:
            key = "atari"
        else:
            key = "default"
    if key not in table:
        raise SystemExit(f"rl-zoo3 {rl_zoo3.__version__} has no {key!r} in {zoo_file(algo)}")
    return key, dict(table[key])


def build(
    algo: str,
    env_id: str,
    seed: int,
    budget: int,
    scratch: Path,
    key: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> ZooBuild:
    """The model (on CPU) for `algo` on `env_id` with the zoo entry `key` plus `overrides` (as
    `rl_zoo3.train --hyperparams` would apply them), its schedules spanning `budget` steps.
    `scratch`: a folder for the one-entry config file the manager reads."""
    key, entry = read_entry(algo, env_id, key)
    path = zoo_file(algo)
    # An `env_kwargs` override goes where `rl_zoo3.train --env-kwargs` puts it, which reaches the
    # evaluation env too (as a hyperparams key, rl-zoo3 2.9.2 passes it to training envs only).
    hyperparams = dict(overrides or {})
    env_kwargs = hyperparams.pop("env_kwargs", None)
    scratch.mkdir(parents=True, exist_ok=True)
    config = scratch / f"zoo_{algo}.yml"
    config.write_text(yaml.safe_dump({env_id: entry}))
    manager = ExperimentManager(
        argparse.Namespace(),
        algo,
        env_id,
        str(scratch / "zoo_logs"),
        n_timesteps=budget,
        eval_freq=-1,
        seed=seed,
        verbose=0,
        device="cpu",
        config=str(config),
        hyperparams=hyperparams,
        env_kwargs=env_kwargs,
    )
    # setup_experiment() less its log folders, callbacks and Monitor files.
    with contextlib.redirect_stdout(sys.stderr):
        hyperparams, saved = manager.read_hyperparameters()
        hyperparams, manager.env_wrapper, _, manager.vec_env_wrapper = (
            manager._preprocess_hyperparams(hyperparams)
        )
        env = manager.create_envs(manager.n_envs, no_log=True)
        hyperparams = manager._preprocess_action_noise(hyperparams, saved, env)
        model = ALGOS[algo](env=env, seed=seed, verbose=0, device="cpu", **hyperparams)
    source = {
        "rl_zoo3": rl_zoo3.__version__,
        "file": f"rl_zoo3/hyperparams/{path.name}",
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "key": key,
        "entry": entry,
        "overrides": dict(overrides or {}),
        "n_envs": manager.n_envs,
        "normalize": bool(manager.normalize),
    }
    return ZooBuild(model, manager, source)
