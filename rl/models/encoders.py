"""Default torso by observation type, and the in-graph conversion of observations to float.

`model="auto"` picks the torso when the network first sees an observation (shapes are env
facts, not hparams): the Nature CNN for [H, W, C] images, else the MLP. `obs_to_float` scales
uint8 INSIDE the compiled graph, so buffers keep 1-byte frames.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from rl.models.cnn import cnn
from rl.models.mlp import mlp
from rl.registry import register_model


def obs_to_float(obs: tf.Tensor) -> tf.Tensor:
    """float32 observations; uint8 images become [0, 1] (x / 255)."""
    if obs.dtype == tf.uint8:
        return tf.cast(obs, tf.float32) / 255.0
    return tf.cast(obs, tf.float32)


def is_image_shape(obs_shape: Sequence[int]) -> bool:
    """Whether one observation of this shape goes through the CNN: rank 3, [H, W, C]."""
    return len(obs_shape) == 3


class AutoTorso(tf.keras.layers.Layer):
    """CNN for [B, H, W, C] inputs, MLP otherwise; the choice is made on the first call."""

    def __init__(self, hidden_sizes: Sequence[int], activation: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.hidden_sizes = list(hidden_sizes)
        self.activation = activation
        self.body: tf.keras.layers.Layer | None = None

    @property
    def kind(self) -> str:
        """ "cnn" or "mlp" once built."""
        if self.body is None:
            raise RuntimeError("AutoTorso chooses its body on the first call")
        return self.body.name.rsplit("_", 1)[-1]

    def build(self, input_shape) -> None:
        make = cnn if is_image_shape(tuple(input_shape)[1:]) else mlp
        kind = "cnn" if make is cnn else "mlp"
        self.body = make(self.hidden_sizes, self.activation, name=f"{self.name}_{kind}")
        self.body.build(input_shape)
        super().build(input_shape)

    def call(self, inputs: tf.Tensor) -> tf.Tensor:
        return self.body(inputs)


@register_model("auto")
def auto(
    hidden_sizes: Sequence[int], activation: str = "relu", name: str = "auto"
) -> tf.keras.layers.Layer:
    """The default torso: the Nature CNN for image observations, the MLP for vectors."""
    return AutoTorso(hidden_sizes, activation, name=name)
