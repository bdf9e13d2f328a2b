"""One data-parallel gradient step under a `tf.distribute` strategy, equal to the single-device
step on the whole batch: the TF guide's custom training loop with the scaling made exact (why:
docs/distributed.md, "One gradient step across replicas").
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import tensorflow as tf

from rl.errors import UserError
from rl.types import LossAndAux
from rl.utils.gradient_clipping import clip_factor
from rl.utils.private_apis import gradients_already_summed

SUM = tf.distribute.ReduceOp.SUM
LossFn = Callable[[dict[str, tf.Tensor]], LossAndAux]


def num_local_replicas(strategy: tf.distribute.Strategy) -> int:
    """Replicas (devices) of this worker; the whole cluster has `num_replicas_in_sync`."""
    return len(strategy.extended.worker_devices)


def check_batch_splits(strategy: tf.distribute.Strategy, size: int) -> None:
    """UserError unless a gradient step's batch of `size` splits evenly across this worker's
    replicas (`split_batch` cuts it into equal parts)."""
    replicas = num_local_replicas(strategy)
    if size % replicas:
        raise UserError(
            f"the learner's batch of {size} does not split evenly across the {replicas} "
            f"replicas of this worker; make batch_size a multiple of {replicas}"
        )


def split_batch(strategy: tf.distribute.Strategy, batch: dict[str, tf.Tensor]):
    """Cuts every entry of `batch` into equal parts along axis 0, part i to local replica i."""
    n = num_local_replicas(strategy)
    parts = {key: tf.split(value, n, axis=0) for key, value in batch.items()}

    def part(context: tf.distribute.experimental.ValueContext) -> dict[str, tf.Tensor]:
        # Replica ids are global (worker index * local replicas + local index).
        local = context.replica_id_in_sync_group % n
        return {key: pieces[local] for key, pieces in parts.items()}

    return strategy.experimental_distribute_values_from_function(part)


def replicated_minimize(
    strategy: tf.distribute.Strategy,
    optimizer: tf.keras.optimizers.Optimizer,
    loss_fn: LossFn,
    variables: list[tf.Variable],
    batch: dict[str, tf.Tensor],
    max_grad_norm: float | tf.Tensor | None,
    loss_weight: Callable[[dict[str, tf.Tensor]], tf.Tensor],
    jit_compile: bool = False,
) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
    """One optimizer step on `loss_fn` over `batch` split across the replicas (cross-replica
    context); (loss, unclipped gradient norm, aux) as one device would return them."""
    # The aux names, split into scalars and per-example tensors when the replica fn is traced.
    scalar_names: list[str] = []

    def weighted_gradients(part: dict[str, tf.Tensor]):
        weight = tf.cast(loss_weight(part), tf.float32)
        with tf.GradientTape() as tape:
            loss, aux = loss_fn(part)
            weighted_loss = loss * weight
        return weight, weighted_loss, aux, tape.gradient(weighted_loss, variables)

    if jit_compile:  # traced as written, as the learner's own function is (no autograph)
        weighted_gradients = tf.function(weighted_gradients, jit_compile=True, autograph=False)

    def replica_step(part: dict[str, tf.Tensor]):
        weight, weighted_loss, aux, grads = weighted_gradients(part)
        pairs = [(g, v) for g, v in zip(grads, variables, strict=True) if g is not None]
        scalar_names[:] = sorted(k for k, v in aux.items() if v.shape.rank == 0)
        per_example = {k: v for k, v in aux.items() if v.shape.rank != 0}
        scalars = tf.stack([weighted_loss, *(aux[k] * weight for k in scalar_names)])
        # The step's one collective: weights, weighted outputs and gradients, summed together.
        total_weight, scalar_sums, *grad_sums = tf.distribute.get_replica_context().all_reduce(
            SUM, [weight, scalars, *(g for g, _ in pairs)]
        )
        scalars = tf.math.divide_no_nan(scalar_sums, total_weight)
        grads = [tf.math.divide_no_nan(g, total_weight) for g in grad_sums]
        grad_norm = tf.linalg.global_norm(grads)
        if max_grad_norm is not None:  # tf.clip_by_global_norm's factor, from the whole norm
            scale = clip_factor(max_grad_norm, grad_norm)
            grads = [g * scale for g in grads]
        optimizer.apply_gradients(zip(grads, [v for _, v in pairs], strict=True))
        return scalars, grad_norm, per_example

    # Around `strategy.run`, not inside: the replicas' threads share the optimizer object.
    with gradients_already_summed(optimizer):
        scalars, grad_norm, per_example = strategy.run(
            replica_step, args=(split_batch(strategy, batch),)
        )
    totals = tf.unstack(strategy.experimental_local_results(scalars)[0])
    aux = dict(zip(scalar_names, totals[1:], strict=True))
    for key, value in per_example.items():
        aux[key] = tf.concat(strategy.experimental_local_results(value), axis=0)
    return totals[0], strategy.experimental_local_results(grad_norm)[0], aux


def replica_xla(strategy: tf.distribute.Strategy, learner_xla: bool) -> bool:
    """Whether each replica's forward and backward pass is XLA-compiled, for a learner that would be
    on one device. Not the whole step: it reads every replica's variables, which one XLA program
    cannot ("Trying to access resource .../replica_1 ..."). TPUStrategy compiles it itself."""
    return learner_xla and not isinstance(strategy, tf.distribute.TPUStrategy)


def replicated_loss(
    strategy: tf.distribute.Strategy,
    loss_fn: LossFn,
    batch: dict[str, tf.Tensor],
    loss_weight: Callable[[dict[str, tf.Tensor]], tf.Tensor],
) -> tf.Tensor:
    """`loss_fn` on the whole `batch` as `replicated_minimize` computes it (--log_level DEBUG)."""

    def replica_loss(part: dict[str, tf.Tensor]) -> tf.Tensor:
        context = tf.distribute.get_replica_context()
        weight = tf.cast(loss_weight(part), tf.float32)
        share = tf.math.divide_no_nan(weight, context.all_reduce(SUM, weight))
        return loss_fn(part)[0] * share

    per_replica = strategy.run(replica_loss, args=(split_batch(strategy, batch),))
    return strategy.reduce(SUM, per_replica, axis=None)


def sum_across_replicas(values: list[tf.Tensor]) -> list[tf.Tensor]:
    """`values` summed over the replicas inside `strategy.run` (ONE collective every replica must
    enter), unchanged elsewhere: whole-batch statistics inside a split loss."""
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return list(values)
    return context.all_reduce(SUM, list(values))


def all_workers_agree(strategy: tf.distribute.Strategy, flag: bool) -> bool:
    """True only if `flag` is True on every worker (a barrier): a decision on a worker's own data
    goes through here, or a worker waits forever in a collective the others never enter."""
    votes = int(_count_votes(strategy)(tf.constant(1 if flag else 0, tf.int32)))
    return votes == strategy.num_replicas_in_sync  # ReduceOp has SUM and MEAN, no MIN


@functools.cache
def _count_votes(strategy: tf.distribute.Strategy) -> Callable[[tf.Tensor], tf.Tensor]:
    """A compiled sum of every replica's vote (collectives run eagerly are slow and warn)."""

    @tf.function(input_signature=[tf.TensorSpec([], tf.int32)], autograph=False)
    def count(vote: tf.Tensor) -> tf.Tensor:
        per_replica = strategy.run(lambda: tf.identity(vote))
        return strategy.reduce(SUM, per_replica, axis=None)

    return count
