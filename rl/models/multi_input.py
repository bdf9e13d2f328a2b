"""The torso for packed Dict/Tuple observations: an encoder per key, concatenated, then the MLP.

Stable-Baselines3's `CombinedExtractor` design: image keys large enough for the Nature CNN go
through one each (with a 256-unit output, as SB3's `cnn_output_dim`), Discrete keys become
one-hot vectors, every other key is flattened; the concatenation feeds Dense layers of
`hidden_sizes`. Observations arrive packed (rl/envs/packed_observation.py): the torso slices each
key out of the vector inside the compiled graph. Entries past the layout (a critic's action)
join the concatenation as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from rl.envs.packed_observation import ObsLayout, ObsPart
from rl.errors import UserError
from rl.models.cnn import cnn
from rl.models.mlp import mlp
from rl.registry import get_model, register_model

# The Nature CNN's three convolutions need at least this many pixels per side.
CNN_MIN_SIDE = 36
# Units of each image key's CNN output (SB3's CombinedExtractor `cnn_output_dim`).
CNN_FEATURES = 256


def goes_through_cnn(part: ObsPart) -> bool:
    """An [H, W, C] image the Nature CNN can read; smaller ones (MiniGrid's 7x7) are flattened."""
    return part.kind == "image" and min(part.shape[:2]) >= CNN_MIN_SIDE


class MultiInputTorso(tf.keras.layers.Layer):
    """Packed observation [B, layout.size (+ extra)] -> features [B, hidden_sizes[-1]]."""

    def __init__(
        self, obs_layout: ObsLayout, hidden_sizes: Sequence[int], activation: str, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        self.layout = obs_layout
        self.image_parts = [p for p in obs_layout.parts if goes_through_cnn(p)]
        # Named attributes: tf.train.Checkpoint would silently miss layers in a Python list.
        for i, _ in enumerate(self.image_parts):
            name = f"{self.name}_cnn_{i}"
            setattr(self, f"cnn_{i}", cnn([CNN_FEATURES], activation, name=name))
        self.body = mlp(hidden_sizes, activation, name=f"{self.name}_mlp")

    def call(self, obs: tf.Tensor) -> tf.Tensor:
        obs = tf.cast(obs, tf.float32)
        pieces = []
        for part in self.layout.parts:
            value = obs[:, part.offset : part.offset + part.size]
            if part.kind == "one_hot":
                pieces.append(tf.one_hot(tf.cast(value[:, 0], tf.int32), part.categories))
            elif goes_through_cnn(part):
                encoder = getattr(self, f"cnn_{self.image_parts.index(part)}")
                pieces.append(encoder(tf.reshape(value * part.scale, [-1, *part.shape])))
            else:
                pieces.append(value * part.scale)
        if obs.shape[-1] is None or obs.shape[-1] > self.layout.size:  # e.g. a critic's action
            pieces.append(obs[:, self.layout.size :])
        return self.body(tf.concat(pieces, axis=-1))


@register_model("multi_input")
def multi_input(
    hidden_sizes: Sequence[int],
    activation: str = "relu",
    name: str = "multi_input",
    obs_layout: ObsLayout | None = None,
) -> tf.keras.layers.Layer:
    """An encoder per key of a Dict/Tuple observation (what `auto` picks for them)."""
    if obs_layout is None:
        raise UserError(
            "model 'multi_input' reads Dict or Tuple observations, and this env has one Box "
            "observation; use model=auto"
        )
    return MultiInputTorso(obs_layout, hidden_sizes, activation, name=name)


def make_torso(
    model: str,
    hidden_sizes: Sequence[int],
    activation: str,
    obs_layout: ObsLayout | None,
    name: str | None = None,
) -> tf.keras.layers.Layer:
    """The registered torso `model`; for packed observations `auto` is `multi_input`, and a torso
    that reads one Box cannot take keys that need their own encoder (UserError)."""
    names = {} if name is None else {"name": name}
    if obs_layout is not None and model in ("auto", "multi_input"):
        return multi_input(hidden_sizes, activation, obs_layout=obs_layout, **names)
    refuse_keys_with_encoders(obs_layout, f"model {model!r}", "use model=auto")
    return get_model(model)(hidden_sizes=hidden_sizes, activation=activation, **names)


def refuse_keys_with_encoders(obs_layout: ObsLayout | None, what: str, fix: str) -> None:
    """UserError where `what`, which reads one flat Box observation, would get packed keys that
    need their own encoder (a Discrete value, an image); vectors and masks it can read."""
    if obs_layout is not None and any(p.kind in ("one_hot", "image") for p in obs_layout.parts):
        raise UserError(
            f"{what} reads one Box observation; these observations have keys "
            f"({obs_layout.describe()}) that need an encoder each: {fix}"
        )
