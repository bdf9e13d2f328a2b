"""Shared machinery of the on-policy policy-gradient agents (REINFORCE, A2C, PPO).

`observe` fills a `RolloutBuffer`; `update` on a full buffer is one compiled call:
1. the rollout is re-evaluated under the current weights (log pi, V, bootstrap values): these
   equal the acting-time numbers, and one batched pass keeps acting free of the value head;
2. truncation is folded into the rewards, then the registered advantage estimator ("gae":
   https://arxiv.org/abs/1506.02438; "discounted_returns": Williams 1992);
3. `n_epochs` shuffled passes of minibatches; the subclass's `loss` is the objective,
   `_update_stop_rule` may end early (PPO's `target_kl`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import NamedTuple

import tensorflow as tf

from rl.agents.actor_critic_agent import ActorCriticAgent
from rl.agents.gradient_functions import masked_mean
from rl.distribute import sum_across_replicas
from rl.registry import get_advantage_estimator
from rl.rollout.minibatches import minibatch_indices
from rl.rollout.reevaluate import bootstrap_values, reevaluate
from rl.rollout.returns import episode_discounts, fold_truncation
from rl.rollout.rollout import Rollout, flatten_steps
from rl.types import HparamTensors, LossAndAux, Metrics, TensorBatch


class PolicyOutputs(NamedTuple):
    """The model's outputs on a minibatch that an on-policy loss reads ([B] each): computed by
    `minibatch_loss`, or elsewhere (many seeds' in one batched pass, rl/compiled)."""

    log_prob: tf.Tensor  # of the minibatch's actions under the current weights
    entropy: tf.Tensor  # of the policy's distribution
    value: tf.Tensor  # V(obs)


def repeat(
    count: int,
    body: Callable[[tf.Tensor, dict], dict],
    state: dict,
    until: Callable[[dict], tf.Tensor] | None = None,
) -> dict:
    """`state = body(i, state)` for i in range(count) as one `tf.while_loop`, ending early once
    `until(state)`. Not autograph: its conversion costs ~1-4 s per process."""

    def keep_going(i: tf.Tensor, state: dict) -> tf.Tensor:
        if until is None:
            return i < count
        return tf.logical_and(i < count, tf.logical_not(until(state)))

    _, state = tf.while_loop(keep_going, lambda i, s: (i + 1, body(i, s)), (tf.constant(0), state))
    return state


def update_epochs(
    n_epochs: int,
    num_minibatches: int,
    draw_indices: Callable[[], tf.Tensor],
    step: Callable[[tf.Tensor, tf.Tensor], tuple[tf.Tensor, tf.Tensor, dict]],
    names: tuple[str, ...],
    zero: tf.Tensor,
    stop_before: Callable[[tf.Tensor, tf.Tensor], tf.Tensor] | None = None,
) -> dict[str, tf.Tensor]:
    """`n_epochs` passes of `num_minibatches` steps `step(indices, k)` -> (loss, grad_norm, aux):
    the means over the steps taken (scalars, or [S] for the many-seeds program).
    `stop_before(indices, k)` skips that step and every later one (PPO's `target_kl`), and
    "update_steps" counts the steps taken."""
    totals = {name: zero for name in (*names, "loss", "grad_norm")}

    def minibatch_step(indices: tf.Tensor, k: tf.Tensor, totals: dict) -> dict:
        loss, grad_norm, aux = step(indices, k)
        return {name: totals[name] + aux.get(name, 0.0) for name in names} | {
            "loss": totals["loss"] + loss,
            "grad_norm": totals["grad_norm"] + grad_norm,
        }

    if stop_before is None:

        def epoch(totals: dict) -> dict:
            indices = draw_indices()
            return repeat(num_minibatches, lambda k, t: minibatch_step(indices, k, t), totals)

        totals = repeat(n_epochs, lambda _, t: epoch(t), totals)
        steps = float(n_epochs * num_minibatches)
        return {name: value / steps for name, value in totals.items()}

    def stoppable_step(indices: tf.Tensor, k: tf.Tensor, state: dict) -> dict:
        stop = stop_before(indices, k)
        totals, steps = tf.cond(
            stop,
            lambda: (state["totals"], state["steps"]),
            lambda: (minibatch_step(indices, k, state["totals"]), state["steps"] + 1.0),
        )
        return {"totals": totals, "steps": steps, "stopped": stop}

    def stoppable_epoch(state: dict) -> dict:
        indices = draw_indices()
        return repeat(num_minibatches, lambda k, s: stoppable_step(indices, k, s), state, _stopped)

    state = {"totals": totals, "steps": tf.zeros_like(zero), "stopped": tf.constant(False)}
    state = repeat(n_epochs, lambda _, s: stoppable_epoch(s), state, _stopped)
    steps = state["steps"]
    metrics = {name: value / tf.maximum(steps, 1.0) for name, value in state["totals"].items()}
    metrics["update_steps"] = steps
    return metrics


def _stopped(state: dict) -> tf.Tensor:
    return state["stopped"]


def explained_variance(returns: tf.Tensor, values: tf.Tensor, axis: int | None = None) -> tf.Tensor:
    """1 - Var[R - V] / Var[R]: how much of the return the value function explains."""
    return 1.0 - tf.math.reduce_variance(returns - values, axis=axis) / (
        tf.math.reduce_variance(returns, axis=axis) + 1e-8
    )


def normalize(x: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    """(x - mean) / (std + 1e-8) over the masked samples; inside a replicated gradient step the
    statistics are the whole batch's (`sum_across_replicas`), as on one device."""
    mask = tf.cast(mask, x.dtype)
    count, total = sum_across_replicas([tf.reduce_sum(mask), tf.reduce_sum(x * mask)])
    count = tf.maximum(count, 1.0)
    mean = total / count
    (squares,) = sum_across_replicas([tf.reduce_sum(tf.square(x - mean) * mask)])
    std = tf.sqrt(squares / count)
    return (x - mean) / (std + 1e-8)


class OnPolicyAgent(ActorCriticAgent):
    """Base of the policy-gradient agents; subclasses implement `loss` (and may `sample_mask`)."""

    masks_actions = True  # the model masks illegal logits (acting and loss alike)

    uses_value: bool = True  # whether the value head is trained (REINFORCE without baseline: no)
    stops_early: bool = False  # whether an update may end before its epochs (PPO's target_kl)
    supports_strategies = True  # minibatch losses are masked means (see `_loss_weight`)
    # `loss` aux outputs logged as train/<name>.
    loss_metrics: tuple[str, ...] = ("policy_loss", "value_loss", "entropy")

    # ---------------------------------------------------------------------- building
    def _build(self) -> None:
        hp, spec = self.hparams, self.spec
        self._build_actor_critic()
        self._build_estimator()
        num_steps = self.steps_per_iteration
        self.num_samples = num_steps * spec.num_envs
        # Each epoch skips the n % num_minibatches samples left over by its permutation.
        self.num_minibatches = max(1, round(self.num_samples / hp.batch_size))
        self.batch_spec = self._build_rollout(num_steps, with_value=True)

    def _build_estimator(self) -> None:
        self.estimator = get_advantage_estimator(self.hparams.advantage_estimator)
        # Passed to the estimators that accept it (a schedule is read at each update).
        accepted = inspect.signature(self.estimator).parameters
        lambda_ = self.hparams.gae_lambda
        self._estimator_options = {"lambda_": lambda_} if "lambda_" in accepted else {}

    def _trainable_variables(self) -> list[tf.Variable]:
        if self.uses_value:
            return self.model.trainable_variables
        return self.model.policy_variables

    # ---------------------------------------------------------------------- learning
    def _update(self) -> Metrics:
        out = self.train_on_batch(self.rollout.data())
        self.rollout.reset()
        return {f"train/{name}": float(value) for name, value in out.items()}

    def _loss_weight(self, batch: TensorBatch) -> tf.Tensor:
        return tf.reduce_sum(batch["mask"])

    def _learner_batch_size(self) -> int:
        return self.num_samples // self.num_minibatches

    def sample_mask(self, batch: TensorBatch) -> tf.Tensor:
        """[T, N] weights of the samples in the loss (1 = use); every sample by default."""
        return tf.ones_like(batch["reward"])

    # ------------------------------------------------- the learner's public role (TF code)
    def learner_step(self, batch: TensorBatch) -> dict[str, tf.Tensor]:
        """`update`'s compiled body on a time-major [T, N] rollout batch (TF code, rl/compiled)."""
        return self._train(batch)

    def training_samples(self, batch: TensorBatch) -> dict[str, tf.Tensor]:
        """The flattened [T * N] samples an update's epochs draw minibatches from: obs, action,
        old_log_prob, old_value (under the weights that acted), advantage, return, mask."""
        # No update has run since the rollout started: these are the acting-time numbers.
        rollout = Rollout.from_batch(batch)
        evaluation = reevaluate(rollout, self.learning_model)
        final_values = bootstrap = None
        if self.uses_value:
            final_values, bootstrap = bootstrap_values(rollout, self.learning_model)
        return self.samples_from_outputs(
            batch, evaluation.log_prob, evaluation.value, final_values, bootstrap
        )

    def samples_from_outputs(
        self,
        batch: TensorBatch,
        log_prob: tf.Tensor,
        value: tf.Tensor,
        final_values: tf.Tensor | None,
        bootstrap: tf.Tensor | None,
        gamma: tf.Tensor | None = None,
        gae_lambda: tf.Tensor | None = None,
    ) -> dict[str, tf.Tensor]:
        """`training_samples` given the model's outputs on the [T, N] rollout `batch`, computed
        elsewhere (many seeds' in one batched pass, rl/compiled): log_prob and value [T, N],
        V(final_obs) [T, N] and V(last_next_obs) [N] (None without a baseline). `gamma` and
        `gae_lambda`: [N] numbers per env column (a population's) replacing the agent's."""
        if not self.uses_value:  # no baseline: truncated and unfinished episodes are worth
            value = final_values = tf.zeros_like(batch["reward"])  # their rewards only
            bootstrap = tf.zeros_like(batch["reward"][0])
        if gamma is None:
            gamma = self.hparam_values.now("gamma", self.learner.gradient_steps)
        rewards = fold_truncation(batch["reward"], batch["truncated"], final_values, gamma)
        discounts = episode_discounts(batch["terminated"], batch["truncated"], gamma)
        advantages, returns = self.estimate_advantages(
            rewards, value, discounts, bootstrap, gae_lambda
        )
        columns = {
            "obs": batch["obs"],
            "action": batch["action"],
            "old_log_prob": log_prob,
            "old_value": value,
            "advantage": advantages,
            "return": returns,
            "mask": self.sample_mask(batch),
        }
        return {key: flatten_steps(column) for key, column in columns.items()}

    def estimate_advantages(
        self,
        rewards: tf.Tensor,
        values: tf.Tensor,
        discounts: tf.Tensor,
        bootstrap: tf.Tensor,
        gae_lambda: float | tf.Tensor | None = None,
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """(advantages, returns) [T, N]; `gae_lambda` (a number, or [N]) replaces the agent's."""
        options = dict(self._estimator_options)
        if "lambda_" in options:
            own = self.hparam_values.now("gae_lambda", self.learner.gradient_steps)
            options["lambda_"] = own if gae_lambda is None else gae_lambda
        return self.estimator(rewards, values, discounts, bootstrap, **options)

    def minibatch_step(
        self, minibatch: TensorBatch
    ) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
        """The optimizer step `update`'s epochs take per minibatch of `training_samples`
        (advantages normalized per minibatch when `normalize_advantage`): (loss, grad norm,
        aux). Public so that one step can be compiled on its own (benchmarks/xla_programs.py)."""
        loss_fn, inputs = self._step_loss_and_inputs(self.normalized(minibatch))
        return self.learner.gradient_step(loss_fn, self._trainable_variables(), inputs)

    def normalized(self, minibatch: TensorBatch) -> TensorBatch:
        """The minibatch a loss reads: advantages normalized over it (masked) when
        `normalize_advantage`, before any strategy splits it (as SB3: per minibatch)."""
        if not self.hparams.normalize_advantage:
            return minibatch
        return {**minibatch, "advantage": normalize(minibatch["advantage"], minibatch["mask"])}

    def _train(self, batch: TensorBatch) -> dict[str, tf.Tensor]:
        samples = self.training_samples(batch)
        metrics = self._update_epochs(samples, self.num_samples)
        metrics["explained_variance"] = explained_variance(samples["return"], samples["old_value"])
        metrics["advantage_mean"] = masked_mean(samples["advantage"], samples["mask"])
        return metrics

    def _update_epochs(self, samples: TensorBatch, num_items: int) -> dict[str, tf.Tensor]:
        """`n_epochs` passes over `num_items` items in shuffled minibatches, one step each."""
        hp = self.hparams

        def gathered(indices: tf.Tensor, k: tf.Tensor) -> TensorBatch:
            return {
                key: tf.gather(value, indices[k], axis=self._minibatch_axis(key))
                for key, value in samples.items()
            }

        def minibatch(indices: tf.Tensor, k: tf.Tensor) -> TensorBatch:
            return self.normalized(gathered(indices, k))

        def step(indices: tf.Tensor, k: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, dict]:
            return self.minibatch_step(gathered(indices, k))

        return update_epochs(
            hp.n_epochs,
            self.num_minibatches,
            lambda: minibatch_indices(self.generator, num_items, self.num_minibatches),
            step,
            self.loss_metrics,
            tf.constant(0.0),
            self._update_stop_rule(minibatch),
        )

    def _minibatch_axis(self, key: str) -> int:
        """The axis of `samples[key]` that `_update_epochs` draws minibatches along."""
        return 0

    def _step_loss_and_inputs(
        self, minibatch: TensorBatch
    ) -> tuple[Callable[[TensorBatch], LossAndAux], TensorBatch]:
        """A gradient step's loss and input, in the layout a strategy splits along axis 0."""
        return self.minibatch_loss, minibatch

    def _update_stop_rule(
        self, minibatch: Callable[[tf.Tensor, tf.Tensor], TensorBatch]
    ) -> Callable[[tf.Tensor, tf.Tensor], tf.Tensor] | None:
        """`update_epochs`' `stop_before`, or None: every epoch runs in full."""
        return None

    def minibatch_loss(self, minibatch: TensorBatch) -> LossAndAux:
        params, value = self.learning_model(minibatch["obs"])
        distribution = self.model.distribution(params)
        log_prob = distribution.log_prob(self.model.flatten_action(minibatch["action"]))
        return self.loss(minibatch, PolicyOutputs(log_prob, distribution.entropy(), value))

    def loss(
        self, minibatch: TensorBatch, outputs: PolicyOutputs, member: HparamTensors | None = None
    ) -> LossAndAux:
        """(loss, aux); aux holds the scalars of `loss_metrics` (a missing one counts as 0).
        `member`: a population member's hparam tensors, read instead of this agent's own
        (`HparamValues.at`): one trace computes every member's loss (rl.compiled)."""
        raise NotImplementedError
