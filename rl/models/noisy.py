"""Noisy linear layers for exploration (NoisyNet), with factorised Gaussian noise.

Fortunato et al. 2017, "Noisy Networks for Exploration", https://arxiv.org/abs/1706.10295;
factorised noise f(x) = sgn(x) sqrt(|x|) and the initialisation of its Section 3.2.

The noise lives in non-trainable variables drawn from the agent's generator (`resample_noise`),
not inside `call`: runs stay deterministic and resumable, and a strategy draws once, outside the
replicas.
"""

from __future__ import annotations

import math

import tensorflow as tf


def scale_noise(noise: tf.Tensor) -> tf.Tensor:
    """f(x) = sgn(x) sqrt(|x|), the paper's transform of factorised noise."""
    return tf.sign(noise) * tf.sqrt(tf.abs(noise))


class NoisyDense(tf.keras.layers.Layer):
    """Dense layer with learned, factorised Gaussian weight and bias noise."""

    def __init__(self, units: int, sigma0: float = 0.5, **kwargs) -> None:
        super().__init__(**kwargs)
        self.units = int(units)
        self.sigma0 = float(sigma0)

    def build(self, input_shape) -> None:
        fan_in = int(input_shape[-1])
        bound = 1.0 / math.sqrt(fan_in)
        mu_init = tf.keras.initializers.RandomUniform(-bound, bound)
        sigma_init = tf.keras.initializers.Constant(self.sigma0 / math.sqrt(fan_in))
        kernel, bias = (fan_in, self.units), (self.units,)
        self.kernel_mu = self.add_weight(name="kernel_mu", shape=kernel, initializer=mu_init)
        self.kernel_sigma = self.add_weight(
            name="kernel_sigma", shape=kernel, initializer=sigma_init
        )
        self.bias_mu = self.add_weight(name="bias_mu", shape=bias, initializer=mu_init)
        self.bias_sigma = self.add_weight(name="bias_sigma", shape=bias, initializer=sigma_init)
        # Standard-normal draws (before f); zero until the first `resample_noise`.
        self.noise_in = self.add_weight(
            name="noise_in", shape=(fan_in,), initializer="zeros", trainable=False
        )
        self.noise_out = self.add_weight(
            name="noise_out", shape=(self.units,), initializer="zeros", trainable=False
        )
        super().build(input_shape)

    def resample_noise(self, generator: tf.random.Generator) -> None:
        """Draws fresh eps_in, eps_out from `generator` (one call: p + q standard normals)."""
        fan_in = self.kernel_mu.shape[0]
        noise = generator.normal([fan_in + self.units])
        self.noise_in.assign(noise[:fan_in])
        self.noise_out.assign(noise[fan_in:])

    def call(self, inputs: tf.Tensor, noisy: bool = True) -> tf.Tensor:
        mean = tf.matmul(inputs, self.kernel_mu) + self.bias_mu
        if not noisy:
            return mean
        f_in, f_out = scale_noise(self.noise_in), scale_noise(self.noise_out)
        # x (sigma_w * outer(f_in, f_out)) = ((x * f_in) sigma_w) * f_out: no p x q noise matrix.
        weight_noise = tf.matmul(inputs * f_in, self.kernel_sigma) * f_out
        return mean + weight_noise + self.bias_sigma * f_out

    def get_config(self) -> dict:
        return {**super().get_config(), "units": self.units, "sigma0": self.sigma0}


def call_linear(layer: tf.keras.layers.Layer, inputs: tf.Tensor, noisy: bool) -> tf.Tensor:
    """Calls a Dense or NoisyDense layer; `noisy` only reaches the layers that take it."""
    if isinstance(layer, NoisyDense):
        return layer(inputs, noisy=noisy)
    return layer(inputs)


def linear_layer(units: int, noisy: bool, sigma0: float, name: str) -> tf.keras.layers.Layer:
    """NoisyDense when `noisy`, else a plain Dense: the one switch a network needs."""
    if noisy:
        return NoisyDense(units, sigma0=sigma0, name=name)
    return tf.keras.layers.Dense(units, name=name)
