"""Agent base class: the public API every algorithm shares (TF-Agents' public-calls-private).

Public methods live here and are not overridden; an algorithm fills the protected hooks. The base
owns the env-step counter, the agent's `tf.random.Generator`, the compiler choice and the hparams
it reads (a population member's from tensors). Its learner role, `agent.learner`
(rl/agents/learner.py), owns the optimizer, the strategy and the counted gradient step.
Acting is `act`, `act_with_info` (pure TF), `greedy_actions` and `observe`; learning is `update`
and, for rl/compiled, `learner_step(batch)` with `learner_variables()`.

The two roles are built apart (Acme's actor/learner split): `_build` makes what acting needs
(networks, exploration, what `observe` writes to), `_build_learning` what only learning needs
(optimizers, the replay table, the compiled update). An acting-only agent
(rl/agents/build.py's `build_actor`: a Ray actor's) has no learner and skips `_build_learning`,
so it holds no optimizer state and no replay; its weights come from the learner.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import tensorflow as tf

from rl.agents.hparam_values import HparamValues
from rl.agents.learner import Learner
from rl.agents.stateless_generator import StatelessGenerator
from rl.distribute import (
    all_workers_agree,
    check_batch_splits,
)
from rl.envs.spec import EnvSpec
from rl.errors import UserError
from rl.hparams import HParams
from rl.hparams.compiled_path import runs_compiled
from rl.memory.array_state import under_prefix, with_prefix
from rl.models.precision import check_agent_precision, compute_in
from rl.types import Batch, LossAndAux, Metrics
from rl.utils import private_apis
from rl.utils.compiler import agent_compiler


class Agent(tf.Module):
    """Base of all agents. Subclasses fill the `_hooks` and write their algorithm's `loss`
    (public: tests and tools evaluate it on a batch of their own); they never override the
    other public methods."""

    # Whether every gradient step passes a batch-wise loss to `gradient_step`.
    supports_strategies: bool = False
    # Why an agent can never run under a strategy (None: it just does not yet).
    strategy_refusal: str | None = None
    # Why an agent cannot compute in a lower `precision` than float32 (None: it can).
    precision_refusal: str | None = None
    # Whether actions depend on per-env carried state: callers then pass `episode_start` flags.
    recurrent: bool = False
    # Whether the policy is a distribution to sample from (PPO, SAC): `sampled_policy_step`.
    stochastic_policy: bool = False
    # Whether acting and learning keep to the legal actions an env's mask names
    # (rl/models/action_mask.py; docs/masking.md).
    masks_actions: bool = False
    # Why the agent cannot take Dict/Tuple observations (None: it can; docs/observations.md).
    structured_obs_refusal: str | None = None
    # Whether it can learn from a hindsight replay (memory=her; docs/goal_conditioned.md).
    replays_with_hindsight: bool = False
    # The learner's compiled update on one batch, made by `_build`: `update` runs it on what the
    # agent gathered; tests and tools run it on a batch of their own.
    train_on_batch: Callable[..., dict[str, tf.Tensor]]

    def __init__(
        self, spec: EnvSpec, hparams: HParams, seed: int, *, acting_only: bool = False
    ) -> None:
        """`acting_only`: build the acting role alone (no learner, `update` refused)."""
        super().__init__(name=type(self).__name__.lower())
        self.check_env(hparams.agent, spec)
        self.spec = spec
        self.hparams = hparams
        self.seed = seed
        if tf.distribute.has_strategy():
            _check_strategy_support(type(self), hparams.agent)
        # A variable so compiled code reads it and checkpoints carry it.
        self.env_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="env_steps")
        self.generator = tf.random.Generator.from_seed(seed)
        self.hparam_values = HparamValues(hparams)  # a population member's: from tensors
        check_agent_precision(
            hparams.precision,
            hparams.agent,
            self.precision_refusal,
            tf.distribute.has_strategy(),
            runs_compiled(spec.env_id),
        )
        # Decided once, before any network or function of either role is built.
        self.compiler = agent_compiler(
            hparams.jit_compile, hparams.model, spec.obs_shape, type(self).__name__
        )
        self.learner: Learner | None = None
        if not acting_only:
            self.learner = Learner(
                hparams,
                self.compiler,
                self.generator,
                self.hparam_values,
                self._loss_weight,
                self._loss_sums_across_replicas(),
            )
        self._build()
        if self.learner is not None:
            self._build_learning()
        compute_in(hparams.precision, private_apis.module_attributes(self, _is_keras_model))
        if self.learner is not None:
            self.learner.optimizer.build(self._trainable_variables())
            if self.learner.distributed:
                check_batch_splits(self.learner.strategy, self._learner_batch_size())
        self._build_acting_functions()

    def _build_acting_functions(self) -> None:
        """The greedy policy's function, and XLA acting for the collect loop when chosen."""
        obs_spec = tf.TensorSpec([None, *self.spec.obs_shape], tf.as_dtype(self.spec.obs_dtype))
        self.greedy_function = tf.function(
            lambda obs: self._act(obs, explore=False),
            input_signature=[obs_spec],
            jit_compile=self.compiler.acting,
            autograph=False,
        )
        # The collect loop steps Python envs, so XLA acting is a nested compiled function.
        self.compiled_act_with_info = (
            tf.function(self._act_with_info, jit_compile=True, autograph=False)
            if self.compiler.acting
            else None
        )

    # ----------------------------------------------------------------------- public API
    @classmethod
    def check_env(cls, agent: str, spec: EnvSpec) -> None:
        """UserError for observations this agent class cannot take (a Dict space, an action
        mask), named with the fix: train.py calls it before anything is written."""
        if spec.obs_layout is not None and cls.structured_obs_refusal:
            raise UserError(
                f"agent {agent!r} cannot take the Dict/Tuple observations of env "
                f"{spec.env_id!r} ({cls.structured_obs_refusal})"
            )
        if spec.action_masked and not cls.masks_actions:
            raise UserError(
                f"env {spec.env_id!r} masks its actions and agent {agent!r} cannot keep to the "
                "legal ones; use one that can (dqn, ppo, a2c, reinforce, impala, ppo_recurrent; "
                "docs/masking.md) or remove the env's action_mask"
            )

    def act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        """Actions for a batch of observations. TF code: call it inside tf.function."""
        return self._act(obs, explore)

    def act_with_info(self, obs: tf.Tensor, episode_start: tf.Tensor | None = None) -> LossAndAux:
        """Exploring actions plus per-step tensors (log_prob, value) wanted back in `observe`;
        `episode_start` [num_envs] resets a `recurrent` agent's carried state."""
        if episode_start is not None:
            self._start_episodes(episode_start)
        if self.compiled_act_with_info is not None:
            return self.compiled_act_with_info(obs)
        return self._act_with_info(obs)

    def greedy_actions(
        self, obs: np.ndarray, episode_start: np.ndarray | None = None
    ) -> np.ndarray:
        """Evaluation-time actions for a numpy batch. `recurrent` agents keep a greedy state
        apart from training's; rows flagged in `episode_start` [B] restart it from zeros."""
        return self._greedy_actions(obs, episode_start)

    @property
    def policy_state_size(self) -> int:
        """Size S of the state a policy carries between steps ([B, S] float32; 0: none)."""
        return 0

    def greedy_policy_step(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """The greedy policy as a pure function (state [B, policy_state_size], zeros start an
        episode) -> (actions, next state). Writes no variables, so rl.export can save it."""
        return self._greedy_policy_step(obs, state)

    def sampled_policy_step(
        self, obs: tf.Tensor, state: tf.Tensor, seed: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """`greedy_policy_step` sampling from the policy, randomness from `seed` alone (same
        seed, same actions, in any process). Only where `stochastic_policy`."""
        if not self.stochastic_policy:
            raise TypeError(f"{type(self).__name__} has no distribution to sample actions from")
        return self._sampled_policy_step(obs, state, StatelessGenerator(seed))

    def observe(self, transition: Batch) -> None:
        """One vector-env step plus `act_with_info`'s tensors (numpy); `next_obs` is the true
        next observation (the final one where an episode ended)."""
        self._observe(transition)

    def end_all_episodes(self) -> None:
        """Every running episode was cut (a checkpoint): flush partial data as truncations."""
        self._end_all_episodes()

    def update(self) -> Metrics:
        """Learns from what was observed; returns metrics, or {} when not ready yet."""
        if self.learner is None:
            raise TypeError(f"an acting-only {type(self).__name__} does not learn")
        ready = self._ready_to_update()
        if self.learner.multi_worker:  # every worker must enter the update's collectives, or none
            ready = all_workers_agree(self.learner.strategy, ready)
        if not ready:
            return {}
        return {**self._update(), **self.learner.diagnostics_metrics()}

    @property
    def steps_per_iteration(self) -> int:
        """Vector-env steps the engine collects between two `update` calls."""
        return max(1, self.hparams.train_every // self.spec.num_envs)

    def learner_variables(self) -> list[tf.Variable]:
        return self._trainable_variables()

    def metrics(self) -> Metrics:
        """Agent state worth logging at any time (learning rate, exploration, ...)."""
        learner = self.learner.metrics() if self.learner is not None else {}
        return {**learner, **self._metrics(self.env_steps)}

    def numpy_state(self) -> dict[str, np.ndarray]:
        """State outside TF variables (replay, partial n-step data), as plain arrays."""
        state: dict[str, np.ndarray] = {}
        for name, part in self._numpy_state_parts().items():
            state |= with_prefix(f"{name}/", part.state_dict())
        return state

    def load_numpy_state(self, state: dict[str, np.ndarray]) -> None:
        for name, part in self._numpy_state_parts().items():
            part.load_state_dict(under_prefix(f"{name}/", state))

    # ------------------------------------------------------------------------- hooks
    def _build(self) -> None:
        """The acting role's parts: networks, exploration, what `observe` writes to."""
        raise NotImplementedError

    def _build_learning(self) -> None:
        """The learner role's parts: optimizers, the replay table, the compiled update."""

    def _loss_weight(self, batch: dict[str, tf.Tensor]) -> tf.Tensor:
        """What a loss's mean over `batch` divides by (override for masked means)."""
        return tf.shape(tf.nest.flatten(batch)[0])[0]

    def _loss_sums_across_replicas(self) -> bool:
        """Whether a loss holds a collective (`sum_across_replicas`): XLA refuses it in replicas."""
        return False

    def _learner_batch_size(self) -> int:
        """Examples in one gradient step's batch (checked to split across replicas)."""
        return self.hparams.batch_size

    def _trainable_variables(self) -> list[tf.Variable]:
        raise NotImplementedError

    def _act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        raise NotImplementedError

    def _act_with_info(self, obs: tf.Tensor) -> LossAndAux:
        return self._act(obs, explore=True), {}

    def _start_episodes(self, episode_start: tf.Tensor) -> None:
        """Recurrent agents: reset the carried state of the flagged envs."""

    def _greedy_policy_step(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        return self._act(obs, explore=False), state  # feed-forward: the state passes through

    def _sampled_policy_step(
        self, obs: tf.Tensor, state: tf.Tensor, generator: StatelessGenerator
    ) -> tuple[tf.Tensor, tf.Tensor]:
        raise NotImplementedError

    def _greedy_actions(self, obs: np.ndarray, episode_start: np.ndarray | None) -> np.ndarray:
        del episode_start  # feed-forward: every step stands alone
        return self.greedy_function(obs).numpy()

    def _observe(self, transition: Batch) -> None:
        raise NotImplementedError

    def _end_all_episodes(self) -> None:
        """Flush partial episode data (nothing by default)."""

    def _ready_to_update(self) -> bool:
        raise NotImplementedError

    def _update(self) -> Metrics:
        raise NotImplementedError

    def _metrics(self, env_steps: tf.Variable) -> Metrics:
        return {}

    def _numpy_state_parts(self) -> dict[str, object]:
        """Named objects with numpy state_dict()/load_state_dict()."""
        return {}


def _check_strategy_support(agent_class: type[Agent], name: str) -> None:
    """UserError for an agent class that cannot run under the distribution strategy in scope."""
    if agent_class.strategy_refusal:
        raise UserError(f"agent {name!r}: {agent_class.strategy_refusal}")
    if not agent_class.supports_strategies:
        raise UserError(
            f"agent {name!r} does not run under a distribution strategy yet; "
            "train it with --strategy default"
        )


def _is_keras_model(value: object) -> bool:
    return isinstance(value, tf.keras.Model)
