"""Shared plumbing of agents that learn from a replay memory (DQN family, DDPG/TD3, SAC, MADDPG).

Transitions pass through an `NStepAccumulator` into the registered replay, except uint8 frame
stacks (Atari), where a `FrameReplay` stores each frame once, and hindsight replay (`memory=her`),
which keeps whole episodes to relabel their goals. `update` runs `gradient_steps`
pre-sampled batches in one compiled call, then writes the |TD errors| back as priorities.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np
import tensorflow as tf

from rl.agents.base import Agent
from rl.envs.goals import goal_reward_function, goal_slices
from rl.envs.spec import EnvSpec
from rl.hparams import as_schedule
from rl.memory import NStepAccumulator, hindsight
from rl.memory.frame_replay import FrameReplay
from rl.registry import get_memory
from rl.types import Batch, Metrics, VectorStep


def uses_frame_replay(spec: EnvSpec, memory: str) -> bool:
    """uint8 frame stacks with a uniform or prioritized memory get the FrameReplay."""
    return (
        spec.frame_stack > 0
        and np.dtype(spec.obs_dtype) == np.uint8
        and memory in ("uniform", "prioritized")
    )


def mean_over_batches(
    batch: dict[str, tf.Tensor],
    train_step: Callable[[dict[str, tf.Tensor]], dict[str, tf.Tensor]],
    names: tuple[str, ...],
    per_item: str = "td_error",
) -> dict[str, tf.Tensor]:
    """`train_step(sample)` for each leading index of `batch` ([K, B, ...]) as one graph loop
    (no autograph needed): the means of its `names` outputs, and its [B] `per_item` as [K, B]."""
    num_batches = tf.shape(batch["reward"])[0]

    def body(k: tf.Tensor, stacked: tf.TensorArray, sums: dict) -> tuple:
        out = train_step({key: value[k] for key, value in batch.items()})
        sums = {name: sums[name] + out[name] for name in names}
        return k + 1, stacked.write(k, out[per_item]), sums

    _, stacked, sums = tf.while_loop(
        lambda k, *_: k < num_batches,
        body,
        (
            tf.constant(0),
            tf.TensorArray(tf.float32, size=num_batches),
            {name: tf.constant(0.0) for name in names},
        ),
    )
    count = tf.cast(num_batches, tf.float32)
    return {**{name: s / count for name, s in sums.items()}, per_item: stacked.stack()}


class ReplayAgent(Agent):
    """Subclasses call `_declare_transitions` in `_build` and implement `_train_on_batches`
    ("td_error": [K, B])."""

    loss_metrics: tuple[str, ...] = ("loss", "grad_norm", "q_mean")  # logged as train/<name>
    replays_with_hindsight = True  # single transitions: HER can give them new goals

    def _declare_transitions(
        self, action_shape: tuple[int, ...], action_dtype: np.dtype, n_step: int
    ) -> None:
        """The acting role's half of replay: the transitions' fields and the n-step accumulator
        `observe` feeds. The table itself is the learner's (`_build_learning`); an Ape-X actor
        puts an outbox in its place (rl/workers/apex_actor.py)."""
        hp, spec = self.hparams, self.spec
        self.per_beta = as_schedule(hp.per_beta)
        self.per_alpha = as_schedule(hp.per_alpha)
        self.per_epsilon = as_schedule(hp.per_epsilon)
        self._action_layout = (action_shape, np.dtype(action_dtype), n_step)
        self._fields = {
            "obs": (spec.obs_shape, spec.obs_dtype),
            "action": (action_shape, np.dtype(action_dtype)),
            "reward": ((), np.dtype(np.float32)),
            "next_obs": (spec.obs_shape, spec.obs_dtype),
            "discount": ((), np.dtype(np.float32)),
        }
        self.replay = None
        # HER's and the frame replay take raw steps and do the n-step returns themselves.
        self.n_step = None
        if hp.memory != hindsight.NAME and not uses_frame_replay(spec, hp.memory):
            self.n_step = NStepAccumulator(
                n=n_step, gamma=hp.gamma, num_envs=spec.num_envs, fields=self._fields
            )
        # Ape-X actors (rl/workers): the compiled `_td_errors` of one batch.
        self._sample_spec = {
            key: tf.TensorSpec([None, *shape], tf.as_dtype(dtype))
            for key, (shape, dtype) in self._fields.items()
        }
        self._sample_spec["weights"] = tf.TensorSpec([None], tf.float32)
        self._td_error_fn = None

    def _build_learning(self) -> None:
        """The replay table and the compiled update on [K, B] batches of it."""
        hp, spec, fields = self.hparams, self.spec, self._fields
        action_shape, action_dtype, n_step = self._action_layout
        memory_cls = get_memory(hp.memory)
        # At the current env step; every priority update passes the schedules' values then.
        alpha, epsilon = self._priority_exponent_and_floor()
        options = {"alpha": alpha, "epsilon": epsilon}
        if hp.memory == hindsight.NAME:
            # Whole episodes per env copy, relabelled at sampling (n_step is 1: env_checks).
            achieved_goal, desired_goal = goal_slices(spec)
            self.replay = memory_cls(
                capacity=hp.buffer_size, obs_shape=spec.obs_shape, obs_dtype=spec.obs_dtype,
                action_shape=action_shape, action_dtype=action_dtype, num_envs=spec.num_envs,
                achieved_goal=achieved_goal, desired_goal=desired_goal,
                compute_reward=goal_reward_function(hp.env, hp.env_kwargs),
                strategy=hp.her_strategy, n_sampled_goal=hp.her_n_sampled_goal, gamma=hp.gamma,
                seed=self.seed,
            )  # fmt: skip
        elif uses_frame_replay(spec, hp.memory):
            self.replay = FrameReplay(
                hp.buffer_size, spec.obs_shape, action_shape, action_dtype,
                spec.num_envs, n_step, hp.gamma, self.seed,
                prioritized=hp.memory == "prioritized", **options,
            )  # fmt: skip
        else:
            accepted = inspect.signature(memory_cls).parameters
            options = {k: v for k, v in options.items() if k in accepted}
            self.replay = memory_cls(
                capacity=hp.buffer_size, fields=fields, seed=self.seed, **options
            )
        # [K, B] as sampled; fixed under a strategy, whose replicas (TPU) need static shapes.
        lead = [hp.gradient_steps, hp.batch_size] if self.learner.distributed else [None, None]
        batch_spec = {
            key: tf.TensorSpec([*lead, *shape], tf.as_dtype(dtype))
            for key, (shape, dtype) in fields.items()
        }
        batch_spec["weights"] = tf.TensorSpec(lead, tf.float32)
        self.train_on_batch = self.learner.function(self._train_on_batches, [batch_spec])

    def _observe(self, transition: Batch) -> None:
        if self.n_step is None:
            self.replay.add(VectorStep.of(transition))
            return
        self._add_to_replay(self.n_step.add(VectorStep.of(transition)))

    def _end_all_episodes(self) -> None:
        if self.n_step is None:
            self.replay.end_all_episodes()
            return
        self._add_to_replay(self.n_step.flush())

    def _add_to_replay(self, completed: Batch) -> None:
        if len(completed["reward"]):
            self.replay.add_batch(completed)

    # ------------------------------------------- Ape-X (rl/workers): actor-side priorities
    def initial_priorities(self, batch: Batch) -> np.ndarray | None:
        """|TD error| of fresh transitions under the current weights, without learning: Ape-X's
        actor-side priorities. None where the agent does not implement `_td_errors`."""
        if type(self)._td_errors is ReplayAgent._td_errors or not len(batch["reward"]):
            return None
        if self._td_error_fn is None:
            self._td_error_fn = tf.function(
                self._td_errors, input_signature=[self._sample_spec], autograph=False
            )
        sample = {**batch, "weights": np.ones(len(batch["reward"]), np.float32)}
        return np.abs(self._td_error_fn(sample).numpy())

    def learner_step(self, batch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """`update`'s compiled body on a [K, B, ...] batch (TF code, rl/compiled)."""
        return self._train_on_batches(batch)

    def _update(self) -> Metrics:
        out = self.sample_and_train()
        return {f"train/{name}": float(out[name]) for name in self.loss_metrics}

    def _ready_to_update(self) -> bool:
        hp = self.hparams
        return (
            len(self.replay) >= max(hp.batch_size, 1)
            and int(self.env_steps.numpy()) >= hp.learning_starts
        )

    def sample_and_train(self) -> dict[str, tf.Tensor]:
        """K sampled batches, one compiled call, priorities written back."""
        hp = self.hparams
        beta = float(self.per_beta(self.env_steps))
        batch = self.replay.sample(hp.batch_size, num_batches=hp.gradient_steps, beta=beta)
        indices = batch.pop("indices")
        out = self.train_on_batch(batch)
        if hp.memory == "prioritized":
            alpha, epsilon = self._priority_exponent_and_floor()
            self.replay.update_priorities(indices, np.abs(out["td_error"].numpy()), alpha, epsilon)
        return out

    def _priority_exponent_and_floor(self) -> tuple[float, float]:
        """`per_alpha` and `per_epsilon` at the current env step (Python floats)."""
        return float(self.per_alpha(self.env_steps)), float(self.per_epsilon(self.env_steps))

    def _numpy_state_parts(self) -> dict[str, object]:
        if self.n_step is None:
            return {"replay": self.replay}
        return {"replay": self.replay, "n_step": self.n_step}

    def _train_on_batches(self, batch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        raise NotImplementedError

    def _td_errors(self, sample: dict[str, tf.Tensor]) -> tf.Tensor:
        """[B] TD errors of one batch under the current weights (optional: `initial_priorities`)."""
        raise NotImplementedError
