"""Optimizers registered by name (`hp.optimizer`), with the learning rate driven by a schedule.

Each factory takes (initial learning rate, epsilon). "rmsprop" is Keras' (epsilon inside the
root, as TF1's that IMPALA used); "rmsprop_torch" is PyTorch's, SB3's A2C's (`torch_rmsprop`).
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.torch_rmsprop import TorchRMSprop
from rl.registry import get_optimizer, register_optimizer


@register_optimizer("adam")
def adam(lr: float, epsilon: float) -> tf.keras.optimizers.Optimizer:
    """Keras Adam with the given epsilon (SB3 and the Atari DQN papers tune it)."""
    return tf.keras.optimizers.Adam(learning_rate=lr, epsilon=epsilon)


@register_optimizer("rmsprop")
def rmsprop(lr: float, epsilon: float) -> tf.keras.optimizers.Optimizer:
    """Keras RMSprop: rho 0.9, epsilon inside the square root."""
    return tf.keras.optimizers.RMSprop(learning_rate=lr, epsilon=epsilon)


@register_optimizer("rmsprop_torch")
def rmsprop_torch(lr: float, epsilon: float) -> tf.keras.optimizers.Optimizer:
    """PyTorch's RMSprop: alpha 0.99, epsilon outside the square root (SB3's A2C)."""
    return TorchRMSprop(learning_rate=lr, alpha=0.99, epsilon=epsilon)


@register_optimizer("sgd")
def sgd(lr: float, epsilon: float) -> tf.keras.optimizers.Optimizer:
    """Plain SGD; `epsilon` has no meaning for it and is ignored."""
    del epsilon
    return tf.keras.optimizers.SGD(learning_rate=lr)


def make_optimizer(
    name: str, initial_lr: float, epsilon: float, precision: str = "float32"
) -> tf.keras.optimizers.Optimizer:
    """A Keras optimizer whose `learning_rate` variable the agent assigns each step. mixed_float16
    wraps it in `LossScaleOptimizer` (float16 gradients below ~6e-8 would flush to zero), whose
    scale is an optimizer variable, so checkpoints carry it."""
    optimizer = get_optimizer(name)(initial_lr, epsilon)
    if precision == "mixed_float16":
        return tf.keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


def loss_scale(optimizer: tf.keras.optimizers.Optimizer) -> tf.Variable | None:
    """The dynamic loss scale of a `LossScaleOptimizer` (None for any other optimizer); clipping
    sits between scaling and unscaling, so its limit and norm are scaled too."""
    if isinstance(optimizer, tf.keras.optimizers.LossScaleOptimizer):
        return optimizer.dynamic_scale
    return None
