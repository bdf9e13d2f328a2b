"""A vector env whose copies are split over N worker processes, seen as one flat vector env.

gymnasium's AsyncVectorEnv runs one env per process, so each process hosts an `EnvGroup`: k =
num_envs / N copies in a SyncVectorEnv (SAME_STEP autoreset) as one gym.Env with [k, ...]
observations that never ends as a whole; per-copy results travel in the step info and
`GroupedAsyncVectorEnv` flattens them back. Copy i is seeded s + i, as in SyncVectorEnv, so both
give the same episodes.

Workers start with spawn (safe beside TensorFlow's threads), ignore SIGINT and SIGTERM (the main
process closes them) and die with their parent. This module is pickled by value into them, so it
imports nothing from `rl`: a worker never imports TensorFlow.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import signal
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import batch_space

import rl.utils.muted_stderr
from rl.errors import WorkerError
from rl.utils.muted_stderr import muted_stderr
from rl.utils.processes import children_ignore_stop_signals

# The info key that carries a group's per-copy results of a step through AsyncVectorEnv's info
# merging, as one plain tuple (reward, terminated, truncated, info): the worker sends it with the
# standard pickle, so it must not be an instance of a class of this (by-value pickled) module.
GROUP_INFO = "rl_env_group"
CLOSE_TIMEOUT_S = 10.0


class EnvGroup(gym.Env):
    """k env copies stepped in order in one process, as one gym.Env with [k, ...] observations."""

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]]) -> None:
        self.envs = SyncVectorEnv(list(env_fns), autoreset_mode=AutoresetMode.SAME_STEP)
        self.observation_space = self.envs.observation_space
        self.action_space = self.envs.action_space
        self.single_observation_space = self.envs.single_observation_space
        self.single_action_space = self.envs.single_action_space
        self.metadata = dict(self.envs.metadata)
        first = self.envs.envs[0]
        self.env_max_episode_steps = first.spec.max_episode_steps if first.spec else None

    def reset(self, *, seed=None, options=None):
        obs, info = self.envs.reset(seed=seed, options=options)
        return obs, {GROUP_INFO: (None, None, None, info)}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.envs.step(action)
        return obs, 0.0, False, False, {GROUP_INFO: (reward, terminated, truncated, info)}

    def close(self) -> None:
        self.envs.close()


def build_group(payload: bytes) -> EnvGroup:
    """Runs in the worker process: builds the group from its pickled env thunks, whose unpickling
    imports the env's modules with stderr muted (TF's C++ import logging would bury our output)."""
    _die_with_parent()
    with muted_stderr():
        env_fns = cloudpickle.loads(payload)
    return EnvGroup(env_fns)


class GroupedAsyncVectorEnv(gym.vector.VectorEnv):
    """`num_envs` copies in `num_workers` processes (num_envs % num_workers == 0)."""

    def __init__(
        self, env_fns: Sequence[Callable[[], gym.Env]], num_workers: int, context: str = "spawn"
    ) -> None:
        num_envs = len(env_fns)
        if num_workers < 1 or num_envs % num_workers:
            raise ValueError(f"{num_envs} env copies do not split over {num_workers} workers")
        self.num_envs = num_envs
        self.num_workers = num_workers
        self.group_size = k = num_envs // num_workers
        for module in (sys.modules[__name__], rl.utils.muted_stderr):
            cloudpickle.register_pickle_by_value(module)
        groups = [
            functools.partial(build_group, cloudpickle.dumps(list(env_fns[g * k : (g + 1) * k])))
            for g in range(num_workers)
        ]
        with children_ignore_stop_signals():
            self._async = AsyncVectorEnv(
                groups,
                shared_memory=True,
                context=context,
                daemon=True,
                autoreset_mode=AutoresetMode.DISABLED,
            )
        self.single_observation_space = self._async.get_attr("single_observation_space")[0]
        self.single_action_space = self._async.get_attr("single_action_space")[0]
        self.env_max_episode_steps = self._async.get_attr("env_max_episode_steps")[0]
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.metadata = {**self._async.metadata, "autoreset_mode": AutoresetMode.SAME_STEP}
        self.render_mode = None

    @property
    def processes(self) -> list:
        """The worker processes (multiprocessing.Process), one per group."""
        return list(self._async.processes)

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None):
        k = self.group_size
        if seed is None:
            seeds = None
        elif isinstance(seed, int | np.integer):
            seeds = [int(seed) + g * k for g in range(self.num_workers)]  # copy i: seed + i
        else:
            seeds = [list(seed[g * k : (g + 1) * k]) for g in range(self.num_workers)]
        obs, infos = self._call(lambda: self._async.reset(seed=seeds, options=options))
        group_infos = [info for _, _, _, info in infos[GROUP_INFO]]
        return self._flat(obs), merge_vector_infos(group_infos, k)

    def step(self, actions):
        actions = np.asarray(actions)
        grouped = actions.reshape(self.num_workers, self.group_size, *actions.shape[1:])
        obs, _, _, _, infos = self._call(lambda: self._async.step(grouped))
        reward, terminated, truncated, group_infos = zip(*infos[GROUP_INFO], strict=True)
        return (
            self._flat(obs),
            np.concatenate(reward),
            np.concatenate(terminated),
            np.concatenate(truncated),
            merge_vector_infos(group_infos, self.group_size),
        )

    def close_extras(self, **kwargs: Any) -> None:
        self._async.close(timeout=CLOSE_TIMEOUT_S)

    def _flat(self, obs: np.ndarray) -> np.ndarray:
        return obs.reshape(self.num_envs, *obs.shape[2:])

    def _call(self, fn: Callable[[], Any]) -> Any:
        """Runs an AsyncVectorEnv call; a worker's exception becomes a one-line WorkerError
        naming the worker (gymnasium's own multi-line error log is captured, not printed)."""
        with warnings.catch_warnings(record=True) as logged:
            warnings.simplefilter("always")
            try:
                result = fn()
            except Exception as error:
                raise self._worker_error(error) from None
        for w in logged:  # anything else gymnasium warned about: pass it on
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return result

    def _worker_error(self, error: Exception) -> WorkerError:
        # AsyncVectorEnv drops the pipe of every worker that reported an exception.
        failed = [g for g, pipe in enumerate(self._async.parent_pipes) if pipe is None]
        detail = str(error).splitlines()[0] if str(error) else ""
        if not failed:
            return WorkerError(f"env workers failed: {type(error).__name__}: {detail}")
        g, k = failed[0], self.group_size
        return WorkerError(
            f"env worker {g} (env copies {g * k}-{g * k + k - 1}) failed: "
            f"{type(error).__name__}: {detail}"
        )


def merge_vector_infos(infos: Sequence[dict[str, Any]], group_size: int) -> dict[str, Any]:
    """Concatenates the vector-env infos of consecutive groups of `group_size` copies (arrays with
    `_key` masks, nested dicts such as "final_info"); a key a group lacks is zeros / None there."""
    out: dict[str, Any] = {}
    for key in dict.fromkeys(key for info in infos for key in info):
        present = next(info[key] for info in infos if key in info)
        if isinstance(present, dict):
            out[key] = merge_vector_infos([info.get(key, {}) for info in infos], group_size)
            continue
        template = np.asarray(present)
        blank = np.zeros((group_size, *template.shape[1:]), template.dtype)
        if template.dtype == object:
            blank[...] = None
        out[key] = np.concatenate(
            [np.asarray(info[key]) if key in info else blank for info in infos]
        )
    return out


def _die_with_parent() -> None:
    """Runs in the worker, so it lives here: rl.utils.processes would import all of rl."""
    name = ctypes.util.find_library("c")
    if name is not None:
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(name).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
