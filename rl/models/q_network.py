"""Q-value networks: a registered torso followed by a plain or dueling head.

Dueling head from Wang et al. 2016, "Dueling Network Architectures for Deep Reinforcement
Learning", https://arxiv.org/abs/1511.06581: Q(s, a) = V(s) + A(s, a) - mean_a' A(s, a').
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from rl.registry import get_model


class DuelingHead(tf.keras.layers.Layer):
    """Splits features into a state value and action advantages, then recombines them."""

    def __init__(self, num_actions: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.value = tf.keras.layers.Dense(1, name="value")
        self.advantage = tf.keras.layers.Dense(num_actions, name="advantage")

    def call(self, features: tf.Tensor) -> tf.Tensor:
        advantage = self.advantage(features)
        # Subtracting the mean makes V and A identifiable (the paper's eq. 9).
        return self.value(features) + advantage - tf.reduce_mean(advantage, -1, keepdims=True)


class QNetwork(tf.keras.Model):
    """obs -> Q-values for every discrete action."""

    def __init__(
        self,
        num_actions: int,
        torso: str,
        hidden_sizes: Sequence[int],
        activation: str,
        dueling: bool,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.torso = get_model(torso)(hidden_sizes=hidden_sizes, activation=activation)
        self.head = (
            DuelingHead(num_actions, name="dueling_head")
            if dueling
            else tf.keras.layers.Dense(num_actions, name="q_head")
        )

    def call(self, obs: tf.Tensor) -> tf.Tensor:
        return self.head(self.torso(tf.cast(obs, tf.float32)))
