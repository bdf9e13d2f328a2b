"""Optimizer construction by name, with the learning rate driven by a schedule."""

from __future__ import annotations

import tensorflow as tf

from rl.errors import UserError, did_you_mean

OPTIMIZERS = {
    "adam": lambda lr, eps: tf.keras.optimizers.Adam(learning_rate=lr, epsilon=eps),
    "rmsprop": lambda lr, eps: tf.keras.optimizers.RMSprop(learning_rate=lr, epsilon=eps),
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
