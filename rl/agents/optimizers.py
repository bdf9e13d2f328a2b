"""Optimizer construction by name, with the learning rate driven by a schedule.

"rmsprop" is Keras' (rho 0.9, epsilon inside the square root, as TF1's RMSPropOptimizer that
IMPALA used); "rmsprop_torch" is PyTorch's with alpha 0.99 and epsilon outside the root, the
optimizer of Stable-Baselines3's A2C (`rl.agents.torch_rmsprop` says why they differ).
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.torch_rmsprop import TorchRMSprop
from rl.errors import UserError, did_you_mean

OPTIMIZERS = {
    "adam": lambda lr, eps: tf.keras.optimizers.Adam(learning_rate=lr, epsilon=eps),
    "rmsprop": lambda lr, eps: tf.keras.optimizers.RMSprop(learning_rate=lr, epsilon=eps),
    "rmsprop_torch": lambda lr, eps: TorchRMSprop(learning_rate=lr, alpha=0.99, epsilon=eps),
    "sgd": lambda lr, eps: tf.keras.optimizers.SGD(learning_rate=lr),
}


def make_optimizer(name: str, initial_lr: float, epsilon: float) -> tf.keras.optimizers.Optimizer:
    """Returns a Keras optimizer whose `learning_rate` variable the agent assigns each step."""
    if name not in OPTIMIZERS:
        raise UserError(
            f"unknown optimizer {name!r}{did_you_mean(name, OPTIMIZERS)}; "
            f"choose one of {', '.join(sorted(OPTIMIZERS))}"
        )
    return OPTIMIZERS[name](initial_lr, epsilon)
