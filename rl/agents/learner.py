"""The learner role (Acme's split): what turns an algorithm's loss into a learning step.

An agent holds one `Learner` as `agent.learner` (none in an acting-only build: a Ray actor's). It
owns the optimizer and its learning-rate schedule, the distribution strategy, the counted
gradient step and the DEBUG diagnostics, so an algorithm module writes only its networks, its
acting and its loss. The
optimizer step itself (clipping, loss scaling, the batch split across replicas:
docs/distributed.md) is rl/agents/optimizer_step.py.
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from rl.agents.diagnostics import UpdateDiagnostics, diagnostics_enabled
from rl.agents.hparam_values import HparamValues
from rl.agents.optimizer_step import LossFn, OptimizerStep
from rl.agents.optimizers import make_optimizer
from rl.distribute import replica_xla, replicated_loss, worker_role
from rl.hparams import HParams, as_schedule
from rl.types import LossAndAux, Metrics
from rl.utils.compiler import CompilerChoice


class Learner(tf.Module):
    """Optimizer, schedule, strategy and the counted `gradient_step` of one agent."""

    def __init__(
        self,
        hparams: HParams,
        compiler: CompilerChoice,
        generator: tf.random.Generator,
        hparam_values: HparamValues,
        loss_weight: Callable[[dict[str, tf.Tensor]], tf.Tensor],
        loss_sums_across_replicas: bool,
    ) -> None:
        """`compiler`: the agent's choice (`compiler.learner` compiles `function`).
        `generator`: the agent's, rewound by the DEBUG diagnostics. `hparam_values`: the agent's,
        for `max_grad_norm`. `loss_weight` as in `OptimizerStep`. `loss_sums_across_replicas`: a
        loss holds a collective, which TF refuses inside an XLA replica."""
        super().__init__(name="learner")
        self.strategy = tf.distribute.get_strategy()  # the scope's (outside any: the default)
        self.distributed = tf.distribute.has_strategy()
        self.multi_worker = worker_role(self.strategy).multi_worker
        # A variable so compiled code reads it and checkpoints carry it.
        self.gradient_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="grad_steps")
        self.generator = generator
        self.hparam_values = hparam_values
        self.diagnostics = UpdateDiagnostics() if diagnostics_enabled() else None  # DEBUG only
        self.learning_rate = as_schedule(hparams.lr)
        self._optimizer_settings = (hparams.optimizer, hparams.adam_epsilon, hparams.precision)
        self.optimizer = self._new_optimizer()
        self.compiler = compiler
        # XLA per replica under a strategy, unless a loss holds a collective.
        self.replica_xla = (
            self.distributed
            and replica_xla(self.strategy, self.compiler.learner)
            and not loss_sums_across_replicas
        )
        self.loss_weight = loss_weight
        self.optimizer_step = OptimizerStep(
            self.strategy if self.distributed else None,
            self.clip_norm,
            loss_weight,
            self.replica_xla,
        )

    def clip_norm(self) -> float | tf.Tensor | None:
        """`max_grad_norm` now: None when off (0), a number, or a schedule's tensor."""
        limit = self.hparam_values.now("max_grad_norm", self.gradient_steps)
        if isinstance(limit, float) and limit <= 0:
            return None
        return limit

    def function(self, fn: Callable, input_signature: list) -> Callable:
        """The learner's `tf.function`, XLA per `compiler` on one device only (TF refuses an XLA
        program reading other replicas' variables: `replica_xla` compiles each replica). Traced
        as written, without autograph: the agents write their loops and branches as
        `tf.while_loop` and `tf.cond`, and autograph's conversion of a learner costs ~5 CPU
        seconds of every process that builds it (half of a tiny DQN run)."""
        jit = self.compiler.learner and not self.distributed
        return tf.function(fn, input_signature=input_signature, jit_compile=jit, autograph=False)

    def gradient_step(
        self,
        loss_fn: LossFn,
        variables: list[tf.Variable],
        batch: dict[str, tf.Tensor] | None = None,
    ) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
        """One optimizer step on `loss_fn(batch)` (or `loss_fn()`): (loss, grad norm, aux). The
        learning rate is set first, so a schedule takes effect inside compiled multi-step loops; at
        DEBUG the loss runs again after the update with the same random numbers."""
        self.optimizer.learning_rate.assign(self.learning_rate(self.gradient_steps))
        rewind = self.diagnostics is not None and not self.distributed
        rng_before = self.generator.state.read_value() if rewind else None
        loss, grad_norm, aux = self.optimizer_step(self.optimizer, loss_fn, variables, batch)
        if self.diagnostics is not None:  # before the counter: schedules see the same step
            loss_after = self._loss_after_step(loss_fn, batch, rng_before)
            self.diagnostics.record(loss, loss_after, grad_norm)
        self.gradient_steps.assign_add(1)
        return loss, grad_norm, aux

    def another_optimizer(self, variables: list[tf.Variable]) -> tf.keras.optimizers.Optimizer:
        """An optimizer like the base one on the same `lr` schedule, built for `variables` (TD3's
        and SAC's actor, SAC's temperature); it steps with `uncounted_step`."""
        optimizer = self._new_optimizer()
        optimizer.build(variables)
        return optimizer

    def _new_optimizer(self) -> tf.keras.optimizers.Optimizer:
        name, epsilon, precision = self._optimizer_settings
        return make_optimizer(name, self.learning_rate.value(0), epsilon, precision)

    def uncounted_step(
        self,
        optimizer: tf.keras.optimizers.Optimizer,
        loss_fn: LossFn,
        variables: list[tf.Variable],
        batch: dict[str, tf.Tensor] | None = None,
    ) -> LossAndAux:
        """`gradient_step` for `another_optimizer`: the same schedule, clipping and loss scaling,
        without counting a gradient step."""
        optimizer.learning_rate.assign(self.learning_rate(self.gradient_steps))
        loss, _, aux = self.optimizer_step(optimizer, loss_fn, variables, batch)
        return loss, aux

    def _loss_after_step(
        self, loss_fn: LossFn, batch: dict[str, tf.Tensor] | None, rng_before: tf.Tensor | None
    ) -> tf.Tensor:
        """The loss on the same batch after the step, drawing the random numbers it drew."""
        if self.distributed:  # no generator inside replicas: nothing to rewind
            return replicated_loss(self.strategy, loss_fn, batch, self.loss_weight)
        rng_after = self.generator.state.read_value()
        self.generator.state.assign(rng_before)
        loss_after, _ = loss_fn() if batch is None else loss_fn(batch)
        self.generator.state.assign(rng_after)
        return loss_after

    def diagnostics_metrics(self) -> Metrics:
        """The DEBUG diagnostics since the last call ({} when off)."""
        if self.diagnostics is None:
            return {}
        return self.diagnostics.pop(int(self.gradient_steps.numpy()))

    def metrics(self) -> Metrics:
        return {
            "train/learning_rate": float(self.learning_rate(self.gradient_steps)),
            # The compiler `jit_compile` resolved to (1: XLA), so a run's logs say which ran.
            "compiler/learner_xla": float(self.compiler.learner),
        }
