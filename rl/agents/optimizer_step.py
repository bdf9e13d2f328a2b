"""One optimizer step of a loss on its variables: the learner's part every algorithm shares.

Clipped to `max_grad_norm`, with the loss scaled under mixed_float16, and under a strategy split
across replicas (rl/distribute/replicated.py). Agents take their steps through
`Learner.gradient_step`, which counts them; an agent with more optimizers than the base one (the
actor and temperature of TD3/SAC) steps them with the same object.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import tensorflow as tf

from rl.agents.optimizers import loss_scale
from rl.distribute import replicated_minimize
from rl.types import LossAndAux
from rl.utils.gradient_clipping import clip_by_global_norm

LossFn = Callable[..., LossAndAux]


class OptimizerStep:
    """`step(optimizer, loss_fn, variables, batch)`: (loss, unclipped gradient norm, aux)."""

    def __init__(
        self,
        strategy: tf.distribute.Strategy | None,
        clip_norm: Callable[[], float | tf.Tensor | None],
        loss_weight: Callable[[dict[str, tf.Tensor]], tf.Tensor],
        replica_xla: bool,
    ) -> None:
        """`strategy`: None on one device. `clip_norm()`: `max_grad_norm` now (None: off), read
        at every step so that a schedule takes effect. `loss_weight(batch)`: what a loss's mean
        over `batch` divides by (replicas weigh their losses by it). `replica_xla`: each replica's
        step XLA-compiled."""
        self.strategy = strategy
        self.clip_norm = clip_norm
        self.loss_weight = loss_weight
        self.replica_xla = replica_xla

    def __call__(
        self,
        optimizer: tf.keras.optimizers.Optimizer,
        loss_fn: LossFn,
        variables: list[tf.Variable],
        batch: dict[str, tf.Tensor] | None = None,
    ) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
        if self.strategy is not None:
            return replicated_minimize(
                self.strategy,
                optimizer,
                loss_fn,
                variables,
                batch,
                self.clip_norm(),
                self.loss_weight,
                self.replica_xla,
            )
        if batch is not None:
            loss_fn = functools.partial(loss_fn, batch)
        return minimize(optimizer, loss_fn, variables, self.clip_norm())


def minimize(
    optimizer: tf.keras.optimizers.Optimizer,
    loss_fn: Callable[[], LossAndAux],
    variables: list[tf.Variable],
    clip_norm: float | tf.Tensor | None,
) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
    """One step on one device, clipped to `clip_norm` (scaled with the loss under
    mixed_float16): (loss, unclipped norm, aux)."""
    scale = loss_scale(optimizer)
    with tf.GradientTape() as tape:
        loss, aux = loss_fn()
        scaled_loss = loss if scale is None else loss * scale
    grads = tape.gradient(scaled_loss, variables)
    grad_norm = tf.linalg.global_norm(grads)
    if scale is not None and clip_norm is not None:
        clip_norm = clip_norm * scale
    grads = clip_by_global_norm(grads, clip_norm, grad_norm)
    optimizer.apply_gradients(zip(grads, variables, strict=False))
    return loss, grad_norm if scale is None else grad_norm / scale, aux
