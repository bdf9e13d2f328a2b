"""Agent base class: the public API every algorithm shares (TF-Agents' public-calls-private).

Public methods live here and are not overridden; an algorithm fills the protected hooks
(`_build`, `_act`, `_observe`, `_ready_to_update`, `_update`, `_numpy_state_parts`). The base
class owns what every algorithm needs done the same way: step counters as tf.Variables, the
agent's own `tf.random.Generator`, the optimizer whose learning rate follows a schedule, and the
gradient step (tape, global-norm clipping, optimizer update, counter).

Distribution strategies are part of that contract. An agent built under `strategy.scope()`
(the in-process engine does this for `--strategy mirrored|multi_worker_mirrored|tpu`) keeps the
strategy, and `_gradient_step(loss_fn, variables, batch)` then splits `batch` across the replicas
and runs the step under `strategy.run` with the loss scaled so that the update equals the one-device
update on the whole batch (`rl.distribute.replicated`, docs/distributed.md). For that, a loss is
a function of its batch (examples on axis 0) returning the batch's (masked) mean and aux
outputs: scalars (means) or per-example tensors; `_loss_weight` says what the mean divides by.
An algorithm that follows this sets `supports_strategies = True`. Without a strategy the step
is the plain one-device code.

Roles (Acme): *acting* is `act` / `act_with_info` (pure TF, so the driver can run it inside a
compiled collect loop), `greedy_actions` (numpy, evaluation) and `observe` (Python, numpy: feeds
memory); *learning* is `update` (Python: memory -> one compiled update) and, for programs that
collect in-graph (rl/compiled), the family's `learner_step(batch)` (TF code: the same update's
body on a batch they built) with `learner_variables()`. Code outside `rl/agents` uses only
these public methods (tests/test_architecture.py checks it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import tensorflow as tf

from rl.agents.diagnostics import UpdateDiagnostics, diagnostics_enabled
from rl.agents.optimizers import loss_scale, make_optimizer
from rl.agents.stateless_generator import StatelessGenerator
from rl.distribute import (
    all_workers_agree,
    num_local_replicas,
    replica_xla,
    replicated_loss,
    replicated_minimize,
    worker_role,
)
from rl.envs.spec import EnvSpec
from rl.errors import UserError
from rl.hparams import HParams, as_schedule
from rl.models.precision import check_precision, compute_in
from rl.types import Batch, Metrics
from rl.utils.compiler import LOGGER as COMPILER_LOGGER
from rl.utils.compiler import CompilerChoice, choose_compiler, device_type, is_convolutional
from rl.utils.gradient_clipping import clip_by_global_norm


class Agent(tf.Module):
    """Base of all agents. Subclasses: fill the `_hooks`; never override public methods."""

    # Whether every gradient step goes through `_gradient_step(loss_fn, variables, batch)` with
    # a batch-wise loss, so the agent can learn under a distribution strategy (see above).
    supports_strategies: bool = False
    # Why an agent can never run under a strategy (None: it just does not yet), said instead of
    # "not yet" when one is asked for.
    strategy_refusal: str | None = None
    # Why an agent cannot compute in a lower `precision` than float32 (None: it can).
    precision_refusal: str | None = None
    # Whether actions depend on per-env state the agent carries from step to step (an RNN's
    # hidden state; rl/agents/recurrent.py). The driver and `evaluate` then pass `episode_start`
    # flags to `act_with_info` / `greedy_actions`, so the agent can reset that state.
    recurrent: bool = False
    # Whether the policy is a distribution to sample from (PPO, SAC, ...), not a deterministic
    # map with exploration noise bolted on (DQN's epsilon, TD3's Gaussian noise):
    # `sampled_policy_step` then answers (an exported policy's `sample_action`, rl.export).
    stochastic_policy: bool = False

    def __init__(self, spec: EnvSpec, hparams: HParams, seed: int) -> None:
        super().__init__(name=type(self).__name__.lower())
        self.spec = spec
        self.hparams = hparams
        self.seed = seed
        # The strategy whose scope the agent is built in (the default one outside any scope).
        self.strategy = tf.distribute.get_strategy()
        self._distributed = tf.distribute.has_strategy()
        self._multi_worker = worker_role(self.strategy).multi_worker
        if self._distributed and self.strategy_refusal:
            raise UserError(f"agent {hparams.agent!r}: {self.strategy_refusal}")
        if self._distributed and not self.supports_strategies:
            raise UserError(
                f"agent {hparams.agent!r} does not run under a distribution strategy yet; "
                "train it with --strategy default"
            )
        # Counters are variables so compiled code reads them and checkpoints carry them.
        self.env_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="env_steps")
        self.gradient_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="grad_steps")
        self.generator = tf.random.Generator.from_seed(seed)
        # Per-update loss before/after diagnostics, traced into the learner only at DEBUG.
        self._diagnostics = UpdateDiagnostics() if diagnostics_enabled() else None
        # Hparams read from tensors instead of the set (a population member, `read_hparams_from`).
        self._hparam_tensors: Callable[[str], tf.Tensor | None] = _no_hparam_tensors
        self.learning_rate = as_schedule(hparams.lr)
        self._check_precision(hparams.precision)
        self.optimizer = make_optimizer(
            hparams.optimizer, self.learning_rate.value(0), hparams.adam_epsilon, hparams.precision
        )
        # XLA or TF's kernels, for the learner and for acting (`jit_compile`, rl/utils/compiler);
        # decided before `_build`, which creates the learner's tf.function.
        self.compiler: CompilerChoice = choose_compiler(
            hparams.jit_compile,
            convolutional=is_convolutional(hparams.model, spec.obs_shape),
            device=device_type(),
        )
        COMPILER_LOGGER.debug("%s: %s", type(self).__name__, self.compiler.describe())
        # Under a strategy XLA compiles each replica's loss and gradient, not the whole step;
        # not a loss with a collective inside (TF refuses merge_call in a nested tf.function).
        self._replica_xla = (
            self._distributed
            and replica_xla(self.strategy, self.compiler.learner)
            and not self._loss_sums_across_replicas()
        )
        self._build()
        # Every network the agent holds, once built, computes in `precision` (rl/models).
        compute_in(hparams.precision, self._flatten(predicate=_is_keras_model))
        self.optimizer.build(self._trainable_variables())
        if self._distributed:
            self._check_replica_batch()
        obs_spec = tf.TensorSpec([None, *spec.obs_shape], tf.as_dtype(spec.obs_dtype))
        self._greedy_fn = tf.function(
            lambda obs: self._act(obs, explore=False),
            input_signature=[obs_spec],
            jit_compile=self.compiler.acting,
        )
        # Acting runs inside the driver's collect loop, which steps Python envs and so cannot be
        # one XLA program: with XLA acting, the acting part is a nested compiled function.
        self._compiled_act_with_info = (
            tf.function(self._act_with_info, jit_compile=True) if self.compiler.acting else None
        )

    # ----------------------------------------------------------------------- public API
    def act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        """Actions for a batch of observations. TF code: call it inside tf.function."""
        return self._act(obs, explore)

    def act_with_info(
        self, obs: tf.Tensor, episode_start: tf.Tensor | None = None
    ) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        """Exploring actions plus per-step tensors the agent wants back in `observe`.

        On-policy agents return e.g. {"log_prob": ..., "value": ...} computed while acting,
        so the learner does not recompute them. TF code: the driver calls it in its loop.
        `episode_start` [num_envs] (bool; the driver passes it to `recurrent` agents only) marks
        the envs whose episode begins at `obs`: their carried state is reset first.
        """
        if episode_start is not None:
            self._start_episodes(episode_start)
        if self._compiled_act_with_info is not None:
            return self._compiled_act_with_info(obs)
        return self._act_with_info(obs)

    def greedy_actions(
        self, obs: np.ndarray, episode_start: np.ndarray | None = None
    ) -> np.ndarray:
        """Evaluation-time actions for a numpy batch (one compiled call).

        `episode_start` [B] (bool) matters to `recurrent` agents only, which keep a greedy
        state of their own (apart from training's): rows where it is set start from a zero
        state. Without it they continue from the previous call's state (zeros on the first
        call and whenever the batch size changes).
        """
        return self._greedy_actions(obs, episode_start)

    @property
    def policy_state_size(self) -> int:
        """Size S of the state a policy carries between steps ([B, S] float32; 0: none)."""
        return 0

    def greedy_policy_step(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """The greedy policy as a pure function: actions for `obs` [B, ...] from `state`
        [B, policy_state_size] (zeros start an episode), and the next state. Reads variables,
        writes none, so it can be saved as a graph (rl.export). TF code."""
        return self._greedy_policy_step(obs, state)

    def sampled_policy_step(
        self, obs: tf.Tensor, state: tf.Tensor, seed: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """`greedy_policy_step` with actions sampled from the policy's distribution, the
        randomness coming from `seed` (int64 scalar) alone: same seed, same actions, in any
        process. Only where `stochastic_policy`. TF code."""
        if not self.stochastic_policy:
            raise TypeError(f"{type(self).__name__} has no distribution to sample actions from")
        return self._sampled_policy_step(obs, state, StatelessGenerator(seed))

    def observe(self, transition: Batch) -> None:
        """Feeds one vector-env step: obs, action, reward, next_obs, terminated, truncated,
        plus the tensors `act_with_info` returned for this step (as numpy arrays).

        `next_obs` is the true next observation (the final one where an episode ended).
        """
        self._observe(transition)

    def end_all_episodes(self) -> None:
        """The in-process engine cut every running episode (a checkpoint boundary): flush
        partial data.

        Cut episodes count as truncations, so their partial transitions bootstrap.
        """
        self._end_all_episodes()

    def update(self) -> Metrics:
        """Learns from what was observed; returns metrics, or {} when not ready yet."""
        ready = self._ready_to_update()
        if self._multi_worker:  # every worker must enter the update's collectives, or none
            ready = all_workers_agree(self.strategy, ready)
        if not ready:
            return {}
        metrics = self._update()
        if self._diagnostics is not None:
            metrics = {**metrics, **self._diagnostics.pop(int(self.gradient_steps.numpy()))}
        return metrics

    @property
    def steps_per_iteration(self) -> int:
        """Vector-env steps the engine collects between two `update` calls."""
        return max(1, self.hparams.train_every // self.spec.num_envs)

    def learner_variables(self) -> list[tf.Variable]:
        """The variables the learner's optimizer updates (e.g. stacked over seeds by
        rl/compiled/stacked_variables.py)."""
        return self._trainable_variables()

    def metrics(self) -> Metrics:
        """Agent state worth logging at any time (learning rate, exploration, ...)."""
        step = self.env_steps
        return {
            "train/learning_rate": float(self.learning_rate(self.gradient_steps)),
            # The compiler `jit_compile` resolved to (1: XLA), so a run's logs say which ran.
            "compiler/learner_xla": float(self.compiler.learner),
            **(self._metrics(step)),
        }

    def numpy_state(self) -> dict[str, np.ndarray]:
        """State outside TF variables (replay, partial n-step data), as plain arrays."""
        state: dict[str, np.ndarray] = {}
        for prefix, part in self._numpy_state_parts().items():
            for key, value in part.state_dict().items():
                state[f"{prefix}/{key}"] = value
        return state

    def load_numpy_state(self, state: dict[str, np.ndarray]) -> None:
        for prefix, part in self._numpy_state_parts().items():
            head = prefix + "/"
            part.load_state_dict(
                {k[len(head) :]: v for k, v in state.items() if k.startswith(head)}
            )

    # ------------------------------------------------------------- helpers for subclasses
    def _gradient_step(
        self,
        loss_fn: Callable[..., tuple[tf.Tensor, dict[str, tf.Tensor]]],
        variables: list[tf.Variable],
        batch: dict[str, tf.Tensor] | None = None,
    ) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
        """One optimizer step on `loss_fn(batch)` (`loss_fn()` if no batch is given); returns
        (loss, gradient norm, aux outputs).

        The learning rate is set from its schedule at the current gradient step first, so a
        schedule takes effect inside compiled multi-step loops. At DEBUG, the loss runs again
        after the update with the same random numbers (rl/agents/diagnostics.py). Under a
        strategy the step is `rl.distribute.replicated_minimize` on `batch` (required there).
        """
        self.optimizer.learning_rate.assign(self.learning_rate(self.gradient_steps))
        if self._distributed:
            return self._replicated_gradient_step(loss_fn, variables, batch)
        if batch is not None:
            loss_fn = functools.partial(loss_fn, batch)
        if self._diagnostics is not None:
            rng_before = self.generator.state.read_value()
        loss, grad_norm, aux = self._minimize(self.optimizer, loss_fn, variables)
        if self._diagnostics is not None:  # before the counter: schedules see the same step
            rng_after = self.generator.state.read_value()
            self.generator.state.assign(rng_before)
            loss_after, _ = loss_fn()
            self.generator.state.assign(rng_after)
            self._diagnostics.record(loss, loss_after, grad_norm)
        self.gradient_steps.assign_add(1)
        return loss, grad_norm, aux

    def _minimize(
        self,
        optimizer: tf.keras.optimizers.Optimizer,
        loss_fn: Callable[[], tuple[tf.Tensor, dict[str, tf.Tensor]]],
        variables: list[tf.Variable],
    ) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
        """One step of `optimizer` on `loss_fn()` on one device, gradients clipped to
        `max_grad_norm`: (loss, gradient norm before clipping, aux). A `LossScaleOptimizer`
        (precision mixed_float16) gets the loss times its scale, and the clipping works on the
        scaled gradients with a scaled limit, which is the same clipping of the true ones."""
        scale = loss_scale(optimizer)
        with tf.GradientTape() as tape:
            loss, aux = loss_fn()
            scaled_loss = loss if scale is None else loss * scale
        grads = tape.gradient(scaled_loss, variables)
        grad_norm = tf.linalg.global_norm(grads)
        limit = self.grad_clip_norm()
        if scale is not None and limit is not None:
            limit = limit * scale
        grads = clip_by_global_norm(grads, limit, grad_norm)
        optimizer.apply_gradients(zip(grads, variables, strict=False))
        return loss, grad_norm if scale is None else grad_norm / scale, aux

    def _replicated_gradient_step(
        self,
        loss_fn: Callable[..., tuple[tf.Tensor, dict[str, tf.Tensor]]],
        variables: list[tf.Variable],
        batch: dict[str, tf.Tensor] | None,
    ) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
        """`_gradient_step` under the agent's strategy (the learning rate is already set)."""
        loss, grad_norm, aux = self._minimize_across_replicas(
            self.optimizer, loss_fn, variables, batch
        )
        if self._diagnostics is not None:  # no generator inside replicas: nothing to rewind
            loss_after = replicated_loss(self.strategy, loss_fn, batch, self._loss_weight)
            self._diagnostics.record(loss, loss_after, grad_norm)
        self.gradient_steps.assign_add(1)
        return loss, grad_norm, aux

    def _minimize_across_replicas(
        self,
        optimizer: tf.keras.optimizers.Optimizer,
        loss_fn: Callable[..., tuple[tf.Tensor, dict[str, tf.Tensor]]],
        variables: list[tf.Variable],
        batch: dict[str, tf.Tensor] | None,
    ) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
        """One step of `optimizer` on `loss_fn(batch)` across the strategy's replicas, with this
        agent's clipping, loss weight and XLA choice: (loss, gradient norm, aux)."""
        if batch is None:
            raise TypeError(f"{type(self).__name__}: pass the batch to the gradient step")
        return replicated_minimize(
            self.strategy,
            optimizer,
            loss_fn,
            variables,
            batch,
            self.grad_clip_norm(),
            self._loss_weight,
            self._replica_xla,
        )

    def read_hparams_from(self, tensors: Callable[[str], tf.Tensor | None]) -> None:
        """From now on, hparam `name` is `tensors(name)` wherever that is not None.

        Why: a population of trials in one compiled program (`rl.compiled.population`) gives
        each member its own lr, ent_coef, gamma, ... as tensors, so one trace serves members
        that differ only in those numbers. Read through `_hparam_at` / `_hparam_now`."""
        self._hparam_tensors = tensors

    def _hparam_at(self, name: str, step: tf.Tensor | tf.Variable) -> tf.Tensor:
        """Hparam `name`, a number or a schedule of the step (`linear(...)`, ...), at `step`
        (float32; TF code). For the floats an agent reads while it trains (ent_coef, tau, ...):
        the gradient step for learner weights and coefficients, the env step for exploration."""
        tensor = self._hparam_tensors(name)
        if tensor is not None:
            return tensor
        return as_schedule(getattr(self.hparams, name))(step)

    def _hparam_now(self, name: str, step: tf.Tensor | tf.Variable) -> float | tf.Tensor | None:
        """Hparam `name` at `step`, keeping constants as Python numbers: a number or a constant
        schedule stays a float (baked into the graph as before schedules, so the same bits),
        None stays None (an optional key that is off), a changing schedule is its float32
        tensor at `step`; a population member's tensor wins (`read_hparams_from`)."""
        tensor = self._hparam_tensors(name)
        if tensor is not None:
            return tensor
        value = getattr(self.hparams, name)
        if value is None:
            return None
        schedule = as_schedule(value)
        if schedule.name == "constant":
            return float(schedule.args["value"])
        return schedule(step)

    def grad_clip_norm(self) -> float | tf.Tensor | None:
        """`max_grad_norm` at the current gradient step: None when clipping is off (0), a
        number, or a tensor for a schedule (no clipping at the steps where it is <= 0).

        Public because the compiled seed stack (`rl.compiled`) clips as the agent does."""
        limit = self._hparam_now("max_grad_norm", self.gradient_steps)
        if isinstance(limit, float) and limit <= 0:
            return None
        return limit

    def _check_precision(self, precision: str) -> None:
        """UserError for a `precision` this agent cannot train in, before anything is built."""
        check_precision(precision)
        if precision == "float32":
            return
        agent = self.hparams.agent
        if self.precision_refusal:
            raise UserError(f"agent {agent!r}: {self.precision_refusal}")
        compiled = self.spec.env_id.startswith("tf/")
        if precision == "mixed_float16" and (self._distributed or compiled):
            raise UserError(
                f"precision=mixed_float16 needs loss scaling, which agent {agent!r} has only on "
                "one device outside the compiled path (not under --strategy, not on a tf/ env); "
                "use precision=mixed_bfloat16 (float32's range: no loss scaling needed)"
            )

    def _check_replica_batch(self) -> None:
        """Every gradient step's batch must split evenly across this worker's replicas."""
        replicas = num_local_replicas(self.strategy)
        size = self._learner_batch_size()
        if size % replicas:
            raise UserError(
                f"the learner's batch of {size} does not split evenly across the {replicas} "
                f"replicas of this worker; make batch_size a multiple of {replicas}"
            )

    # ------------------------------------------------------------------------- hooks
    def _build(self) -> None:
        raise NotImplementedError

    def _loss_weight(self, batch: dict[str, tf.Tensor]) -> tf.Tensor:
        """What a loss's mean over `batch` divides by: its number of examples (override for
        masked means). Under a strategy it weighs each replica's loss (rl/distribute)."""
        return tf.shape(tf.nest.flatten(batch)[0])[0]

    def _loss_sums_across_replicas(self) -> bool:
        """Whether a loss takes whole-batch statistics with `rl.distribute.sum_across_replicas`
        (a collective inside the loss); under a strategy its replicas then run on TF's kernels:
        TF cannot put a collective inside the per-replica XLA program ("`merge_call` called
        while defining a new graph or a tf.function")."""
        return False

    def _learner_batch_size(self) -> int:
        """Examples in one gradient step's batch (checked to split across replicas)."""
        return self.hparams.batch_size

    def _learner_function(self, fn: Callable, input_signature: list) -> Callable:
        """The learner's `tf.function`: XLA-compiled per the resolved `jit_compile` hparam
        (`self.compiler`) on one device. Under a strategy the outer loop is not (TF refuses: an
        XLA program would read other replicas' variables); each replica's forward and backward
        pass is instead (`rl.distribute.replica_xla`), and TPUStrategy compiles the replicated
        work with XLA itself."""
        jit = self.compiler.learner and not self._distributed
        return tf.function(fn, input_signature=input_signature, jit_compile=jit)

    def _trainable_variables(self) -> list[tf.Variable]:
        raise NotImplementedError

    def _act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        raise NotImplementedError

    def _act_with_info(self, obs: tf.Tensor) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        return self._act(obs, explore=True), {}

    def _start_episodes(self, episode_start: tf.Tensor) -> None:
        """Recurrent agents: reset the carried state of the envs flagged in `episode_start`."""

    def _greedy_policy_step(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        return self._act(obs, explore=False), state  # feed-forward: the state passes through

    def _sampled_policy_step(
        self, obs: tf.Tensor, state: tf.Tensor, generator: StatelessGenerator
    ) -> tuple[tf.Tensor, tf.Tensor]:
        raise NotImplementedError

    def _greedy_actions(self, obs: np.ndarray, episode_start: np.ndarray | None) -> np.ndarray:
        del episode_start  # feed-forward: every step stands alone
        return self._greedy_fn(obs).numpy()

    def _observe(self, transition: Batch) -> None:
        raise NotImplementedError

    def _end_all_episodes(self) -> None:
        pass

    def _ready_to_update(self) -> bool:
        raise NotImplementedError

    def _update(self) -> Metrics:
        raise NotImplementedError

    def _metrics(self, env_steps: tf.Variable) -> Metrics:
        return {}

    def _numpy_state_parts(self) -> dict[str, object]:
        """Named objects with state_dict()/load_state_dict() of numpy arrays."""
        return {}


def _is_keras_model(value: object) -> bool:
    return isinstance(value, tf.keras.Model)


def _no_hparam_tensors(name: str) -> None:
    """Every hparam comes from the set (the default of `Agent.read_hparams_from`)."""
    return None
