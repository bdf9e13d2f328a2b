"""One data-parallel gradient step under a `tf.distribute` strategy, equal to the single-device
step on the whole batch.

`Agent._gradient_step` calls `replicated_minimize` when the agent was built under a strategy's
scope (MirroredStrategy, MultiWorkerMirroredStrategy, TPUStrategy). It is the standard custom
training loop of the TF distributed-training guide, with the scaling made exact:

1. The batch (every entry: examples on axis 0) is cut into equal parts, one per local replica
   (`experimental_distribute_values_from_function`). With several workers each worker's batch
   is its own data (its own envs and replay); the *global* batch is all workers' batches.
2. Each replica computes the algorithm's ordinary mean loss on its part and scales it by its
   part's share of the global loss weight: `share = w_r / sum_r w_r`, where `w_r` is the
   number of examples, or the sum of a sample mask (`Agent._loss_weight`). For a (masked) mean
   this makes `sum_r share_r * loss_r` exactly the loss of the whole batch, also with masks
   that differ between parts; for equal parts without a mask `share = 1 / num_replicas`.
3. The gradients of the scaled losses are summed across replicas (`ReplicaContext.all_reduce`)
   to get the whole batch's gradient and its global norm; clipping by global norm (as on one
   device) multiplies each replica's gradient by the same factor, and the Keras optimizer, in
   replica context, all-reduces (sums) them again and applies the same update on every replica.
   So the norm is taken after the all-reduce, as on one device: that costs a second all-reduce
   of the gradients, which is small next to the forward/backward passes of RL networks.
4. Outputs: the loss and every scalar in `aux` are share-weighted and summed with ONE
   `strategy.reduce` (a global mean, the number one device would give); the gradient norm is
   the same on every replica; `aux` tensors with examples on axis 0 (e.g. per-example TD errors
   for prioritized replay) are concatenated from this worker's replicas in batch order.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import tensorflow as tf

SUM = tf.distribute.ReduceOp.SUM
LossFn = Callable[[dict[str, tf.Tensor]], tuple[tf.Tensor, dict[str, tf.Tensor]]]


def num_local_replicas(strategy: tf.distribute.Strategy) -> int:
    """Replicas (devices) of this worker; the whole cluster has `num_replicas_in_sync`."""
    return len(strategy.extended.worker_devices)


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
    max_grad_norm: float,
    loss_weight: Callable[[dict[str, tf.Tensor]], tf.Tensor],
) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
    """One optimizer step on `loss_fn` over `batch` split across the strategy's replicas.

    Call in cross-replica context (inside the learner's `tf.function`, not inside
    `strategy.run`). Returns (loss, gradient norm before clipping, aux) as one device would.
    """
    # The aux names, split into scalars and per-example tensors when the replica fn is traced.
    scalar_names: list[str] = []

    def replica_step(part: dict[str, tf.Tensor]):
        context = tf.distribute.get_replica_context()
        weight = tf.cast(loss_weight(part), tf.float32)
        share = tf.math.divide_no_nan(weight, context.all_reduce(SUM, weight))
        with tf.GradientTape() as tape:
            loss, aux = loss_fn(part)
            scaled_loss = loss * share
        grads = tape.gradient(scaled_loss, variables)
        pairs = [(g, v) for g, v in zip(grads, variables, strict=True) if g is not None]
        local_grads = [g for g, _ in pairs]
        grad_norm = tf.linalg.global_norm(context.all_reduce(SUM, local_grads))
        if max_grad_norm > 0:  # tf.clip_by_global_norm's factor, from the whole batch's norm
            scale = max_grad_norm / tf.maximum(grad_norm, max_grad_norm)
            local_grads = [g * scale for g in local_grads]
        # In replica context the Keras optimizer sums the gradients over replicas itself.
        optimizer.apply_gradients(zip(local_grads, [v for _, v in pairs], strict=True))
        scalar_names[:] = sorted(k for k, v in aux.items() if v.shape.rank == 0)
        per_example = {k: v for k, v in aux.items() if v.shape.rank != 0}
        scalars = tf.stack([scaled_loss, *(aux[k] * share for k in scalar_names)])
        return scalars, grad_norm, per_example

    scalars, grad_norm, per_example = strategy.run(
        replica_step, args=(split_batch(strategy, batch),)
    )
    totals = tf.unstack(strategy.reduce(SUM, scalars, axis=None))
    aux = dict(zip(scalar_names, totals[1:], strict=True))
    for key, value in per_example.items():
        aux[key] = tf.concat(strategy.experimental_local_results(value), axis=0)
    return totals[0], strategy.experimental_local_results(grad_norm)[0], aux


def replicated_loss(
    strategy: tf.distribute.Strategy,
    loss_fn: LossFn,
    batch: dict[str, tf.Tensor],
    loss_weight: Callable[[dict[str, tf.Tensor]], tf.Tensor],
) -> tf.Tensor:
    """`loss_fn` on the whole `batch`, computed across replicas as `replicated_minimize` does
    (no gradient, no update): the --log_level DEBUG loss after a step."""

    def replica_loss(part: dict[str, tf.Tensor]) -> tf.Tensor:
        context = tf.distribute.get_replica_context()
        weight = tf.cast(loss_weight(part), tf.float32)
        share = tf.math.divide_no_nan(weight, context.all_reduce(SUM, weight))
        return loss_fn(part)[0] * share

    per_replica = strategy.run(replica_loss, args=(split_batch(strategy, batch),))
    return strategy.reduce(SUM, per_replica, axis=None)


def all_workers_agree(strategy: tf.distribute.Strategy, flag: bool) -> bool:
    """True only if `flag` is True on every worker (a collective: every worker must call it).

    Multi-worker training must take the same branches everywhere, or a worker waits forever in
    a collective the others never enter; a decision that depends on a worker's own data (e.g.
    "the replay holds a batch") goes through here. Also a barrier.
    """
    votes = int(_count_votes(strategy)(tf.constant(1 if flag else 0, tf.int32)))
    return votes == strategy.num_replicas_in_sync  # ReduceOp has SUM and MEAN, no MIN


@functools.cache
def _count_votes(strategy: tf.distribute.Strategy) -> Callable[[tf.Tensor], tf.Tensor]:
    """A compiled sum of every replica's vote (collectives run eagerly are slow and warn)."""

    @tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
    def count(vote: tf.Tensor) -> tf.Tensor:
        per_replica = strategy.run(lambda: tf.identity(vote))
        return strategy.reduce(SUM, per_replica, axis=None)

    return count
