"""Per-update learning diagnostics at `--log_level DEBUG`: the loss on a batch before the
optimizer step, on the SAME batch after it, and the gradient norm. A step that does not lower
the loss on its own batch points at a learning rate too high, clipping too tight or a loss that
does not depend on the updated weights.

Steps are recorded into variables inside the compiled learner and logged once per `update`; the
extra forward pass is traced in only when DEBUG is on as the agent is built.
"""

from __future__ import annotations

import logging

import tensorflow as tf

from rl.types import Metrics

LOGGER = logging.getLogger(__name__)


def diagnostics_enabled() -> bool:
    """Whether agents built now trace the per-update diagnostics (DEBUG level)."""
    return LOGGER.isEnabledFor(logging.DEBUG)


class UpdateDiagnostics:
    """Sums over the gradient steps of one `update` call. Not a tf.Module, so its variables stay out
    of checkpoints and a run resumes with or without DEBUG; MEAN aggregation lets replicas add to
    it."""

    NAMES = ("loss_before", "loss_after", "grad_norm", "improved")

    def __init__(self) -> None:
        mean = tf.VariableAggregation.MEAN
        self._sums = {
            name: tf.Variable(0.0, trainable=False, aggregation=mean, name=f"debug_{name}")
            for name in self.NAMES
        }
        first = tf.VariableAggregation.ONLY_FIRST_REPLICA
        self._steps = tf.Variable(0.0, trainable=False, aggregation=first, name="debug_steps")

    def record(self, loss_before: tf.Tensor, loss_after: tf.Tensor, grad_norm: tf.Tensor) -> None:
        """Adds one gradient step (TF code: runs inside the compiled learner)."""
        improved = tf.cast(loss_after < loss_before, tf.float32)
        values = (loss_before, loss_after, grad_norm, improved)
        for name, value in zip(self.NAMES, values, strict=True):
            self._sums[name].assign_add(tf.cast(value, tf.float32))
        self._steps.assign_add(1.0)

    def pop(self, gradient_steps: int) -> Metrics:
        """Means since the last call as `debug/...` metrics (resets the sums; {} if no step)."""
        steps = float(self._steps.numpy())
        if steps == 0:
            return {}
        means = {name: float(self._sums[name].numpy()) / steps for name in self.NAMES}
        for variable in (*self._sums.values(), self._steps):
            variable.assign(0.0)
        before, after = means["loss_before"], means["loss_after"]
        LOGGER.debug(
            "gradient step %d: loss %.6g -> %.6g on the same batch (%+.3g%%), grad norm %.4g, "
            "loss lower after %.0f%% of %d steps",
            gradient_steps,
            before,
            after,
            100.0 * (after - before) / max(abs(before), 1e-12),
            means["grad_norm"],
            100.0 * means["improved"],
            steps,
        )
        return {
            "debug/loss_before": before,
            "debug/loss_after": after,
            "debug/loss_change": after - before,
            "debug/grad_norm": means["grad_norm"],
            "debug/improved_fraction": means["improved"],
        }
