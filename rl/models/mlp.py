"""Multi-layer perceptron torso for vector observations."""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from rl.registry import register_model


@register_model("mlp")
def mlp(
    hidden_sizes: Sequence[int], activation: str = "relu", name: str = "mlp"
) -> tf.keras.Sequential:
    """Returns Dense layers of `hidden_sizes` units; the head is added by the agent.

    The input is flattened first so any Box observation works. The model builds lazily on its
    first call, so it needs no input shape here.
    """
    layers: list[tf.keras.layers.Layer] = [tf.keras.layers.Flatten()]
    layers += [tf.keras.layers.Dense(size, activation=activation) for size in hidden_sizes]
    return tf.keras.Sequential(layers, name=name)
