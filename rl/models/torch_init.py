"""PyTorch's default initialization for any built Keras model.

Stable-Baselines3 keeps PyTorch's defaults where it does not ask for orthogonal init (PPO with
`ortho_init=False`, SAC, TD3, DDPG): starting as theirs, a comparison measures the algorithm.
"""

from __future__ import annotations

import tensorflow as tf

from rl.utils import private_apis


def torch_init(*models: tf.keras.layers.Layer) -> None:
    """Re-initializes every built layer of `models` as PyTorch's defaults would:
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for Dense kernels and biases, U(-1/sqrt(units),
    1/sqrt(units)) for GRU/LSTM, where Keras' single LSTM bias is the sum of PyTorch's two. Call
    after the first forward pass (the variables exist then)."""

    def uniform(variable: tf.Variable, bound: float, terms: int = 1) -> None:
        # A Keras 3 initializer repeats its draws: one new initializer per draw.
        draws = [
            tf.keras.initializers.RandomUniform(-bound, bound)(variable.shape) for _ in range(terms)
        ]
        variable.assign(tf.add_n(draws))

    # Into nested models and Sequentials.
    layers = [
        layer for model in models for layer in private_apis.nested_layers(model, include_self=False)
    ]
    for layer in layers:
        if isinstance(layer, tf.keras.layers.Dense):
            bound = 1.0 / float(layer.kernel.shape[0]) ** 0.5
            uniform(layer.kernel, bound)
            if layer.bias is not None:
                uniform(layer.bias, bound)
        elif isinstance(layer, tf.keras.layers.GRUCell | tf.keras.layers.LSTMCell):
            bound = 1.0 / float(layer.units) ** 0.5
            uniform(layer.kernel, bound)
            uniform(layer.recurrent_kernel, bound)
            if layer.bias is not None:  # GRU (reset_after): [2, 3u], b_ih and b_hh rows
                lstm = isinstance(layer, tf.keras.layers.LSTMCell)
                uniform(layer.bias, bound, terms=2 if lstm else 1)
