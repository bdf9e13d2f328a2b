"""Global-norm gradient clipping whose limit may be a schedule (`max_grad_norm`). A number keeps
`tf.clip_by_global_norm` (the same bits as before schedules); a tensor limit may reach 0, which
means "no clipping" as it does for a number.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf


def clip_factor(limit: float | tf.Tensor, norm: tf.Tensor) -> tf.Tensor:
    """The scale `tf.clip_by_global_norm` applies for `norm`, and 1 where `limit` <= 0; NaN/inf
    norms propagate."""
    if isinstance(limit, float | int):
        if limit <= 0:
            return tf.ones_like(norm) + (norm - norm)
        return limit / tf.maximum(norm, limit)
    factor = limit / tf.maximum(norm, limit)
    return tf.where(limit > 0, factor, tf.ones_like(factor) + (norm - norm))


def clip_by_global_norm(
    grads: Sequence[tf.Tensor | None], limit: float | tf.Tensor | None, norm: tf.Tensor
) -> list[tf.Tensor | None]:
    """`grads` clipped to global norm `limit` (None: unchanged; a number: TF's function, none for <=
    0; a tensor: see the module docstring). `norm` is their global norm."""
    if limit is None or (isinstance(limit, float | int) and limit <= 0):
        return list(grads)
    if isinstance(limit, float | int):
        clipped, _ = tf.clip_by_global_norm(grads, limit, norm)
        return clipped
    factor = clip_factor(limit, norm)
    return [None if g is None else g * factor for g in grads]
