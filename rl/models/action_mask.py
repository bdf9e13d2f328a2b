"""Action masking in the graph: the legal actions of a packed observation, and values or logits
with the illegal ones pushed out of reach.

Huang and Ontañón 2020, "A Closer Look at Invalid Action Masking in Policy Gradient Algorithms",
https://arxiv.org/abs/2006.14171: replacing an illegal action's logit by a large negative number
makes its probability 0 and its gradient 0, in acting and in the loss alike (sb3-contrib's
MaskablePPO uses -1e8). A finite number, not -inf, keeps 0 * log 0 terms (entropy) at 0.
"""

from __future__ import annotations

import tensorflow as tf

from rl.envs.packed_observation import ObsLayout

# What an illegal action's logit or Q-value becomes: far below any real one, still finite.
ILLEGAL_VALUE = -1e9


def legal_actions(obs: tf.Tensor, obs_layout: ObsLayout) -> tf.Tensor:
    """[B, A] bool from the mask packed in `obs` [B, layout.size]. A row without any legal
    action (some envs send an all-zero mask with the last observation) counts all as legal."""
    part = obs_layout.action_mask
    legal = tf.cast(obs[:, part.offset : part.offset + part.size], tf.float32) > 0.5
    return tf.logical_or(legal, tf.logical_not(tf.reduce_any(legal, axis=-1, keepdims=True)))


def mask_illegal(values: tf.Tensor, legal: tf.Tensor) -> tf.Tensor:
    """`values` [B, A] with the illegal entries set to ILLEGAL_VALUE."""
    return tf.where(legal, values, tf.constant(ILLEGAL_VALUE, values.dtype))
