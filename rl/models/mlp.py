"""Multi-layer perceptron torso for vector observations."""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from rl.registry import register_model


@register_model("mlp")
def mlp(
    hidden_sizes: Sequence[int], activation: str = "relu", name: str = "mlp"
) -> tf.keras.Sequential:
    """Dense layers of `hidden_sizes` units after a Flatten (any Box observation works)."""
    layers: list[tf.keras.layers.Layer] = [tf.keras.layers.Flatten()]
    layers += [tf.keras.layers.Dense(size, activation=activation) for size in hidden_sizes]
    return tf.keras.Sequential(layers, name=name)
