"""Which of the learner's variables its actors need: the policy's weights.

The learner sends them to its actors through Ray's object store (rl/workers/actor_group.py) as
one list of numpy arrays in this order.
"""

from __future__ import annotations

import tensorflow as tf


def policy_variables(agent: tf.Module) -> list[tf.Variable]:
    """The variables an actor needs to act as the learner's policy and to compute priorities.

    Those of every Keras network the agent holds (online and target networks alike), plus its
    other trainable variables (SAC's temperature), in attribute-name order, which is the same
    in every process. Counters, optimizer slots, RNG and exploration-noise state are per process.
    """
    out: list[tf.Variable] = []
    attributes = vars(agent)
    for name in sorted(attributes):
        value = attributes[name]
        if isinstance(value, tf.keras.layers.Layer):
            out.extend(value.variables)
        elif isinstance(value, tf.Variable) and value.trainable:
            out.append(value)
    return out
