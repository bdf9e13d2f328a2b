"""Saving a training VecEnv in the middle of its episodes, or saying that it cannot be.

An SB3 cell resumed after a kill must step the same envs as a cell never stopped. A plain pickle
does not do it: gymnasium's MuJoCo and Box2D envs pickle through `EzPickle`, which rebuilds a
fresh env from its constructor arguments, and SB3's VecEnv wrappers pickle without the env they
wrap (`VecNormalize`) or not at all (the others carry their class's members). `dumps` pickles
those objects by their attributes instead (MuJoCo's `MjData`, generators and wrapper counters
pickle as they are), and `pickles_faithfully` checks on two throwaway envs that a copy steps
exactly like the original. Where it does not (Box2D's and the ALE's native objects do not
pickle), the cell cuts its episodes at every checkpoint instead (sb3_cell.py), in the
uninterrupted run as in the resumed one.
"""

from __future__ import annotations

import inspect
import io
import pickle
from collections.abc import Callable
from typing import Any

import cloudpickle
import numpy as np
from gymnasium.utils import EzPickle
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper


def _set_attributes(obj: Any, state: dict[str, Any]) -> None:
    obj.__dict__.update(state)
    if isinstance(obj, VecEnvWrapper):  # a cache of the class's members, rebuilt as SB3 does
        obj.class_attributes = dict(inspect.getmembers(type(obj)))


class _StatePickler(cloudpickle.Pickler):
    """cloudpickle, with EzPickle envs and VecNormalize kept by their attributes (module doc)."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, EzPickle | VecEnvWrapper) and not isinstance(obj, type):
            state = {k: v for k, v in obj.__dict__.items() if k != "class_attributes"}
            return (object.__new__, (type(obj),), state, None, None, _set_attributes)
        return super().reducer_override(obj)


def dumps(env: VecEnv) -> bytes:
    """The VecEnv with its envs' running episodes, as bytes for `loads`."""
    buffer = io.BytesIO()
    _StatePickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(env)
    return buffer.getvalue()


def loads(blob: bytes) -> VecEnv:
    return pickle.loads(blob)


def _random_actions(env: VecEnv, count: int) -> list[np.ndarray]:
    space = env.action_space
    space.seed(12345)
    return [np.stack([space.sample() for _ in range(env.num_envs)]) for _ in range(count)]


def _equal(a: Any, b: Any) -> bool:
    """Arrays, or the Dict observations of a goal env (a dict of arrays), equal bit for bit."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return np.array_equal(a, b)


def pickles_faithfully(make_env: Callable[[], VecEnv], steps: int = 100) -> tuple[bool, str]:
    """(True, how) if a `dumps`/`loads` copy of an env from `make_env` steps bit for bit like an
    identical env never copied, on seeded random actions through episode ends; else (False, why).
    Uses two envs of its own: the training env is not touched."""
    try:
        original, twin = make_env(), make_env()
        original.reset()
        twin.reset()
        actions = _random_actions(original, 2 * steps)
        for action in actions[:steps]:
            original.step(action)
            twin.step(action)
        copy = loads(dumps(original))
        for action in actions[steps:]:
            got, want = copy.step(action), twin.step(action)
            for a, b in zip(got[:3], want[:3], strict=True):
                if not _equal(a, b):
                    return False, "a pickled copy steps differently"
        original.close()
        twin.close()
        copy.close()
    except Exception as error:  # not picklable (native objects) or not restorable
        return False, f"{type(error).__name__}: {error}"[:200]
    return True, "pickled with its running episodes"
