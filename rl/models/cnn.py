"""The Nature-DQN convolutional torso for image observations (Mnih et al. 2015, Nature 518), with
orthogonal initialization of gain sqrt(2) as OpenAI baselines' `nature_cnn`. Inputs are already
scaled to [0, 1] inside the compiled graph (`obs_to_float`), so replay and rollouts keep uint8.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import tensorflow as tf

from rl.registry import register_model

# (filters, kernel size, stride) of the three Nature-DQN convolutions.
NATURE_CONVOLUTIONS = ((32, 8, 4), (64, 4, 2), (64, 3, 1))


@register_model("cnn")
def cnn(
    hidden_sizes: Sequence[int] = (512,), activation: str = "relu", name: str = "cnn"
) -> tf.keras.Sequential:
    """Nature-DQN convolutions, then Dense layers of `hidden_sizes` units ([512] in the paper)."""
    init = tf.keras.initializers.Orthogonal(math.sqrt(2.0))
    layers: list[tf.keras.layers.Layer] = [
        tf.keras.layers.Conv2D(
            filters, kernel, strides=stride, activation=activation, kernel_initializer=init
        )
        for filters, kernel, stride in NATURE_CONVOLUTIONS
    ]
    layers.append(tf.keras.layers.Flatten())
    layers += [
        tf.keras.layers.Dense(size, activation=activation, kernel_initializer=init)
        for size in hidden_sizes
    ]
    return tf.keras.Sequential(layers, name=name)
