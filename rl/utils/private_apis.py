"""Every use rl makes of another library's private API, and the versions it was written for.

TensorFlow, Keras and Ray have no public way to do a few things rl needs: vectorize a function
without a nested XLA function, read TF's op-determinism switch, walk a model's nested layers,
take over the cross-replica gradient sum, ask Ray for an actor's restarts. Their internals move
between releases without notice, so each access lives here and first checks the installed
version against `SUPPORTED` (the versions these lines were read against and tested with; the
ranges pyproject.toml declares for them, tests/test_packaging.py). An upgrade past them fails at
the first use, in one line naming the supported versions, instead of as an AttributeError deep
in a trace. tests/test_architecture.py keeps every other module of rl/ off these internals.

Ray is imported only inside its functions: `import rl` stays free of it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

from rl.errors import UserError

# {import name: (lowest supported release, first unsupported release)}.
SUPPORTED: dict[str, tuple[str, str]] = {
    "tensorflow": ("2.20", "2.22"),  # 2.20: the TPU image (tensorflow-tpu); 2.21: CPU and GPU
    "keras": ("3.10", "4"),  # Keras 3, which TF 2.20 and 2.21 bring
    "ray": ("2.60", "2.61"),  # the one minor tested: Ray's internals move every release
    "gymnasium_robotics": ("1.4", "1.5"),  # its MuJoCo helpers, patched for MuJoCo 4 below
}
# The key under which a TF checkpoint stores its object graph beside the variables. Part of the
# checkpoint format, which TF keeps readable across versions, so it needs no version check.
CHECKPOINT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
# The common base of an ArgumentParser and its argument groups (both take `add_argument`); a
# type only. argparse's internals need no check: Python 3.11+ (pyproject.toml) all have them.
ArgumentContainer = argparse._ActionsContainer


class UnsupportedVersion(UserError):
    """An installed library is outside the versions whose internals rl was written for."""


def release(version: str) -> tuple[int, ...]:
    """The leading release numbers of a version string: `2.21.0rc1` -> (2, 21, 0)."""
    numbers = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group()))
        if digits.end() < len(part):
            break
    return tuple(numbers)


def check_version(name: str, version: str) -> None:
    """Raises UnsupportedVersion unless `version` of library `name` is in `SUPPORTED`."""
    low, high = SUPPORTED[name]
    if not release(low) <= release(version) < release(high):
        raise UnsupportedVersion(
            f"rl uses internals of {name} that it supports in versions >={low},<{high}, but "
            f"{name} {version} is installed; install a supported version (the ranges in "
            "pyproject.toml; ./setup.sh installs the tested pins)"
        )


_checked: set[str] = set()


def require(name: str) -> None:
    """Raises UnsupportedVersion unless the installed library `name` (an import name of
    `SUPPORTED`) is a supported version; checked once per process. Every function below calls
    it first; a caller that reaches one only late in a run may call it up front."""
    if name not in _checked:
        check_version(name, importlib.import_module(name).__version__)
        _checked.add(name)


# --- gymnasium-robotics -------------------------------------------------------------------------


class _JointTypesAsInts(types.ModuleType):
    """The `mujoco` module with `mjtJoint`'s members as plain ints (everything else forwarded)."""

    def __init__(self, mujoco: types.ModuleType) -> None:
        super().__init__(mujoco.__name__)
        self._mujoco = mujoco
        members = {name: int(value) for name, value in mujoco.mjtJoint.__members__.items()}
        self.mjtJoint = types.SimpleNamespace(**members)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._mujoco, name)


def fix_robotics_joint_types() -> None:
    """Lets gymnasium-robotics 1.4 build its Fetch tasks on MuJoCo 4. Its joint helpers assert
    `model.jnt_type[j] in (mjtJoint.mjJNT_HINGE, mjtJoint.mjJNT_SLIDE)`; MuJoCo 4's enums no longer
    equal a numpy integer on their left, so every Fetch task fails at its first reset. The helpers
    are given a `mujoco` whose joint types are plain ints (same values); idempotent."""
    require("gymnasium_robotics")
    patch_robotics_joint_types()


def patch_robotics_joint_types() -> None:
    """`fix_robotics_joint_types` without its version check: it reads nothing of rl but this
    module's `release` and `_JointTypesAsInts`, so the process that draws a Fetch task's frames
    runs it pickled by value without importing rl (rl/envs/robotics.py)."""
    import mujoco
    from gymnasium_robotics.utils import mujoco_utils

    if release(mujoco.__version__) >= (4,) and not isinstance(
        mujoco_utils.mujoco, _JointTypesAsInts
    ):
        mujoco_utils.mujoco = _JointTypesAsInts(mujoco)


# --- TensorFlow ---------------------------------------------------------------------------------


def pfor(loop_fn: Callable[[Any], Any], iters: int) -> Any:
    """`tf.vectorized_map`'s engine (one trace of `loop_fn(i)`, batched ops over `iters`) with
    its ops in the caller's graph; falls back to a while loop for ops it cannot vectorize."""
    require("tensorflow")
    from tensorflow.python.ops.parallel_for.control_flow_ops import _pfor_impl

    return _pfor_impl(loop_fn, iters, fallback_to_while_loop=True)


def op_determinism_enabled() -> bool | None:
    """Whether `tf.config.experimental.enable_op_determinism()` is in effect (TF has no public
    getter); None where the framework's own getter is missing."""
    require("tensorflow")
    try:
        from tensorflow.python.framework import config
    except ImportError:
        return None
    getter = getattr(config, "is_op_determinism_enabled", None)
    return bool(getter()) if getter is not None else None


def forget_retracing_history() -> None:
    """Resets TF's count of recent retracings, which it keeps per Python function for the whole
    process and warns on after 5: a process that runs `train.main` once per request (the test
    session's trainer, tests/tiny_trainer.py) then warns only where a fresh `python train.py`
    would. A declared test hook: nothing in rl calls it."""
    require("tensorflow")
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    polymorphic_function._frequent_tracing_detector_manager = (
        polymorphic_function._FrequentTracingDetectorManager()
    )


def module_attributes(module: Any, predicate: Callable[[Any], bool]) -> tuple[Any, ...]:
    """Every value in `module`'s attributes, recursively through nested modules, lists and
    dicts, for which `predicate` holds: the walk behind `tf.Module.submodules`, which offers no
    predicate of its own."""
    require("tensorflow")
    return module._flatten(predicate=predicate)


def checkpoint_object_graph(serialized: bytes) -> Any:
    """The `TrackableObjectGraph` proto stored under `CHECKPOINT_GRAPH_KEY` in a checkpoint."""
    require("tensorflow")
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(serialized)
    return graph


# --- Keras --------------------------------------------------------------------------------------


def nested_layers(layer: Any, include_self: bool = True) -> Iterator[Any]:
    """Every layer inside `layer`, depth first through nested models and Sequentials (Keras'
    own recursive walk; `Layer.layers` is one level only)."""
    require("keras")
    return layer._flatten_layers(include_self=include_self)


def optimizer_variable_index(optimizer: Any, variable: Any) -> int:
    """The index of `variable` in `optimizer`'s variable list: where its slot variables are
    (what Keras' own optimizers call in `update_step`)."""
    require("keras")
    return optimizer._get_variable_index(variable)


@contextlib.contextmanager
def gradients_already_summed(optimizer: Any) -> Iterator[None]:
    """Within: `optimizer.apply_gradients` does not sum the gradients over replicas (they are the
    whole batch's already). Keras 3 has no public switch, so `_all_reduce_sum_gradients` is
    replaced on this one optimizer while the step is traced."""
    require("keras")
    if not hasattr(optimizer, "_all_reduce_sum_gradients"):
        raise TypeError(
            f"{type(optimizer).__name__} has no _all_reduce_sum_gradients to switch off; "
            "rl.distribute expects a Keras 3 TensorFlow optimizer"
        )
    optimizer._all_reduce_sum_gradients = lambda grads_and_vars: grads_and_vars
    try:
        yield
    finally:
        del optimizer._all_reduce_sum_gradients


# --- Ray ----------------------------------------------------------------------------------------


def ray_actor_state(handle: Any) -> dict[str, Any]:
    """An actor's entry in Ray's control store (its "State", "NumRestarts", ...): the public
    state API needs the dashboard, which rl does not start."""
    require("ray")
    from ray._private import state

    return state.actors(handle._actor_id.hex())


def ray_worker_niceness(niceness: int) -> dict[str, Any]:
    """`ray.init` keyword arguments that start a local cluster's workers at `niceness` (Ray's
    default, 15, leaves actors only what every other process on the machine leaves over)."""
    require("ray")
    return {"_system_config": {"worker_niceness": niceness}}


# --- argparse -----------------------------------------------------------------------------------


def parser_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every action (flag) of `parser`, in the order they were added: argparse has no public
    accessor for them."""
    return parser._actions
