"""Sampling from a categorical policy given logits (policy-gradient agents)."""

from __future__ import annotations

import tensorflow as tf

from rl.registry import register_action_function


@register_action_function("sample", role="logits_sample")
def sample(logits: tf.Tensor, generator: tf.random.Generator) -> tf.Tensor:
    """Draws one action per row from softmax(`logits`) with the Gumbel-max trick.

    argmax(logits + Gumbel noise) is an exact sample from the categorical distribution and
    needs only the agent's generator (tf.random.categorical would use global op seeds).
    """
    uniform = generator.uniform(tf.shape(logits), minval=1e-20, maxval=1.0)
    gumbel = -tf.math.log(-tf.math.log(uniform))
    return tf.argmax(logits + gumbel, axis=-1, output_type=tf.int64)
