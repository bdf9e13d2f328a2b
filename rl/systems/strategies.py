"""`tf.distribute` strategies by name, for the trainer and for Pods launched by `--sys tpu`.

`make_strategy("tpu")` fails fast with a `UserError` where no TPU is attached: it checks for the
TPU runtime (`libtpu`) and the TPU device files before it touches `TPUClusterResolver`, which
would otherwise wait on the GCE metadata server. The Pods that `--sys tpu` launches carry
`RL_STRATEGY=tpu`; `strategy_from_env()` turns that into the strategy.
"""

from __future__ import annotations

import glob
import importlib.util
import os
from collections.abc import Callable

import tensorflow as tf

from rl.errors import UserError, did_you_mean
from rl.systems.tf_config import install_tf_config

STRATEGY_ENV = "RL_STRATEGY"


def _default() -> tf.distribute.Strategy:
    return tf.distribute.get_strategy()


def _mirrored() -> tf.distribute.Strategy:
    return tf.distribute.MirroredStrategy()


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
                "TPU image (k8s/Dockerfile.tpu, tensorflow-tpu 2.20 + libtpu) on a TPU node"
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
    "default": _default,
    "mirrored": _mirrored,
    "multi_worker_mirrored": _multi_worker_mirrored,
    "tpu": _tpu,
}


def make_strategy(name: str) -> tf.distribute.Strategy:
    """The `tf.distribute.Strategy` called `name`; an unknown name or a missing device is a
    `UserError` naming the choices."""
    if name not in STRATEGIES:
        names = sorted(STRATEGIES)
        raise UserError(
            f"unknown strategy {name!r}{did_you_mean(name, names)}; choices: {', '.join(names)}"
        )
    return STRATEGIES[name]()


def strategy_from_env() -> tf.distribute.Strategy:
    """The strategy named by $RL_STRATEGY (set in the Pods `--sys tpu` launches), else default."""
    return make_strategy(os.environ.get(STRATEGY_ENV) or "default")
