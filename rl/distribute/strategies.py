"""`tf.distribute` strategies by name, for the trainer and for Pods (which carry RL_STRATEGY).
"tpu" fails fast without a TPU: `TPUClusterResolver` would wait on the GCE metadata server.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
from collections.abc import Callable

import tensorflow as tf

from rl.distribute.tf_config import install_tf_config
from rl.errors import UserError, did_you_mean

STRATEGY_ENV = "RL_STRATEGY"


def _multi_worker_mirrored() -> tf.distribute.Strategy:
    if install_tf_config() is None:
        raise UserError(
            "strategy 'multi_worker_mirrored' needs TF_CONFIG or an Indexed Job's "
            "JOB_COMPLETION_INDEX/RL_NUM_WORKERS/RL_JOB_NAME (see k8s/ and docs/tpu_gke.md)"
        )
    return tf.distribute.MultiWorkerMirroredStrategy()


def tpu_device_files() -> list[str]:
    """TPU device nodes of a Cloud TPU VM: /dev/accel* (v4, v5p) or /dev/vfio/<n> (v5e, v6e)."""
    return sorted(glob.glob("/dev/accel*") + glob.glob("/dev/vfio/[0-9]*"))


def _tpu() -> tf.distribute.Strategy:
    remote = os.environ.get("TPU_NAME", "local")
    if remote == "local":
        if importlib.util.find_spec("libtpu") is None:
            raise UserError(
                "strategy 'tpu': the TPU runtime (libtpu) is not installed here; run in the "
                "TPU image (k8s/Dockerfile.tpu: tensorflow-tpu + libtpu) on a TPU node"
            )
        if not tpu_device_files():
            raise UserError(
                "strategy 'tpu': no TPU device on this machine (/dev/accel*, /dev/vfio/N); "
                "run on a GKE TPU node (python train.py --sys tpu ...)"
            )
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=remote)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


STRATEGIES: dict[str, Callable[[], tf.distribute.Strategy]] = {
    "default": tf.distribute.get_strategy,
    "mirrored": tf.distribute.MirroredStrategy,
    "multi_worker_mirrored": _multi_worker_mirrored,
    "tpu": _tpu,
}


def check_strategy_name(name: str) -> str:
    """`name` if it is a strategy, else a `UserError` that names the choices."""
    if name not in STRATEGIES:
        names = sorted(STRATEGIES)
        raise UserError(
            f"unknown strategy {name!r}{did_you_mean(name, names)}; choices: {', '.join(names)}"
        )
    return name


def make_strategy(name: str) -> tf.distribute.Strategy:
    """The strategy called `name`; an unknown name or a missing device is a `UserError`."""
    return STRATEGIES[check_strategy_name(name)]()


def strategy_name(flag: str | None = None) -> str:
    """The strategy to train with: `--strategy` if given, else $RL_STRATEGY, else "default"."""
    return check_strategy_name(flag or os.environ.get(STRATEGY_ENV) or "default")


@functools.cache
def shared_strategy(name: str) -> tf.distribute.Strategy:
    """`make_strategy(name)` once per process (a multi-worker or TPU system is set up once)."""
    return make_strategy(name)


def training_strategy(flag: str | None, agent: str | None, compiled: bool, training: bool) -> str:
    """The run's strategy name, checked before anything is written; a non-default one is made
    here, so a missing TPU or TF_CONFIG fails now."""
    name = strategy_name(flag)
    if name == "default" or not training:
        return name
    if compiled:
        raise UserError(
            f"strategy {name!r}: the compiled trainer (tf/ envs) runs on one device for now; "
            "use --strategy default (or unset RL_STRATEGY)"
        )
    from rl import registry

    refusal = getattr(registry.agents.get(agent), "strategy_refusal", None) if agent else None
    if refusal:
        raise UserError(f"agent {agent!r} cannot run under strategy {name!r}: {refusal}")
    if agent is not None and not registry.agents.get(agent).supports_strategies:
        able = [n for n in registry.agents.names() if registry.agents.get(n).supports_strategies]
        raise UserError(
            f"agent {agent!r} does not run under strategy {name!r} yet (agents that do: "
            f"{', '.join(able)}); use --strategy default"
        )
    shared_strategy(name)
    return name


def strategy_from_env() -> tf.distribute.Strategy:
    """The strategy named by $RL_STRATEGY (set in the Pods `--sys tpu` launches), else default."""
    return make_strategy(os.environ.get(STRATEGY_ENV) or "default")
