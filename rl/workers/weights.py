"""The policy's weights an actor needs, as one flat array read and loaded with one compiled call
each: loading IMPALA's 8 CartPole variables one `assign` at a time cost an actor 0.9 ms of CPU
per call, the flat load 0.3 ms (docs/workers.md), and Ray serializes one buffer.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def policy_variables(agent: tf.Module) -> list[tf.Variable]:
    """What an actor needs to act and compute priorities: every Keras network's variables (target
    networks too) and other trainable ones (SAC's temperature), in attribute-name order."""
    out: list[tf.Variable] = []
    attributes = vars(agent)
    for name in sorted(attributes):
        value = attributes[name]
        if isinstance(value, tf.keras.layers.Layer):
            out.extend(value.variables)
        elif isinstance(value, tf.Variable) and value.trainable:
            out.append(value)
    return out


class PolicyWeights:
    """An agent's `policy_variables` as one flat array of their (common) dtype."""

    def __init__(self, agent: tf.Module) -> None:
        variables = policy_variables(agent)
        # The flat array has one dtype (Keras variables name theirs as a string, tf's as a DType).
        (dtype,) = {tf.as_dtype(v.dtype) for v in variables}
        sizes = [v.shape.num_elements() for v in variables]
        self._read = tf.function(
            lambda: tf.concat([tf.reshape(v, [-1]) for v in variables], 0),
            input_signature=[],
            autograph=False,
        )

        @tf.function(input_signature=[tf.TensorSpec([sum(sizes)], dtype)], autograph=False)
        def load(flat: tf.Tensor) -> None:
            for variable, part in zip(variables, tf.split(flat, sizes), strict=True):
                variable.assign(tf.reshape(part, variable.shape))

        self.load = load

    def read(self) -> np.ndarray:
        return self._read().numpy()
