"""Q-value networks: a registered torso followed by a plain or dueling head.

Dueling: Wang et al. 2016, https://arxiv.org/abs/1511.06581, Q = V + A - mean_a' A. The Rainbow
options (https://arxiv.org/abs/1710.02298): `noisy` NoisyDense heads and `num_atoms > 1` logits
over a return support per action (C51), combined per atom.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from rl.envs.packed_observation import ObsLayout
from rl.models.encoders import obs_to_float
from rl.models.multi_input import make_torso
from rl.models.noisy import NoisyDense, call_linear, linear_layer
from rl.utils import private_apis


class DuelingHead(tf.keras.layers.Layer):
    """Splits features into a state value and action advantages, then recombines them; with
    `num_atoms` > 1 the result is [B, A, N] logits (Rainbow's distributional dueling head)."""

    def __init__(
        self,
        num_actions: int,
        num_atoms: int = 1,
        noisy: bool = False,
        sigma0: float = 0.5,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.num_actions, self.num_atoms = num_actions, num_atoms
        self.value = linear_layer(num_atoms, noisy, sigma0, name="value")
        self.advantage = linear_layer(num_actions * num_atoms, noisy, sigma0, name="advantage")

    def call(self, features: tf.Tensor, noisy: bool = True) -> tf.Tensor:
        value = call_linear(self.value, features, noisy)
        advantage = call_linear(self.advantage, features, noisy)
        if self.num_atoms > 1:
            value = tf.reshape(value, [-1, 1, self.num_atoms])
            advantage = tf.reshape(advantage, [-1, self.num_actions, self.num_atoms])
        # Subtracting the mean over actions makes V and A identifiable (the paper's eq. 9).
        return value + advantage - tf.reduce_mean(advantage, 1, keepdims=True)


class QNetwork(tf.keras.Model):
    """obs -> Q-values for every discrete action ([B, A]), or with `num_atoms` > 1 the logits
    of each action's categorical return distribution ([B, A, num_atoms])."""

    def __init__(
        self,
        num_actions: int,
        torso: str,
        hidden_sizes: Sequence[int],
        activation: str,
        dueling: bool,
        noisy: bool = False,
        num_atoms: int = 1,
        sigma0: float = 0.5,
        obs_layout: ObsLayout | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.num_actions, self.num_atoms = num_actions, num_atoms
        self.torso = make_torso(torso, hidden_sizes, activation, obs_layout)
        if dueling:
            self.head = DuelingHead(num_actions, num_atoms, noisy, sigma0, name="dueling_head")
        else:
            self.head = linear_layer(num_actions * num_atoms, noisy, sigma0, name="q_head")

    def call(self, obs: tf.Tensor, noisy: bool = True) -> tf.Tensor:
        """`noisy=False`: NoisyDense layers use their mean weights (greedy evaluation)."""
        return self._head(self.torso(obs_to_float(obs)), noisy)

    def _head(self, features: tf.Tensor, noisy: bool) -> tf.Tensor:
        if isinstance(self.head, DuelingHead):
            return self.head(features, noisy=noisy)
        out = call_linear(self.head, features, noisy)
        if self.num_atoms > 1:
            out = tf.reshape(out, [-1, self.num_actions, self.num_atoms])
        return out

    def noisy_layers(self) -> list[NoisyDense]:
        """The NoisyDense layers of the head (none without `noisy`), in creation order."""
        # The head itself, then a dueling head's value, advantage.
        layers = private_apis.nested_layers(self.head)
        return [layer for layer in layers if isinstance(layer, NoisyDense)]

    def resample_noise(self, generator: tf.random.Generator) -> None:
        for layer in self.noisy_layers():
            layer.resample_noise(generator)
