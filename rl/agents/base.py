"""Agent base class: the public API every algorithm shares (TF-Agents' public-calls-private).

Public methods live here and are not overridden; an algorithm fills the protected hooks
(`_build`, `_act`, `_observe`, `_ready_to_update`, `_update`, `_numpy_state_parts`). The base
class owns what every algorithm needs done the same way: step counters as tf.Variables, the
agent's own `tf.random.Generator`, the optimizer whose learning rate follows a schedule, and the
gradient step (tape, global-norm clipping, optimizer update, counter).

Roles (Acme): *acting* is `act` (pure TF, so the driver can run it inside a compiled collect
loop) and `observe` (Python, numpy: feeds memory); *learning* is `update`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import tensorflow as tf

from rl.agents.optimizers import make_optimizer
from rl.envs.spec import EnvSpec
from rl.hparams import HParams, as_schedule
from rl.types import Batch, Metrics


class Agent(tf.Module):
    """Base of all agents. Subclasses: fill the `_hooks`; never override public methods."""

    def __init__(self, spec: EnvSpec, hparams: HParams, seed: int) -> None:
        super().__init__(name=type(self).__name__.lower())
        self.spec = spec
        self.hparams = hparams
        self.seed = seed
        # Counters are variables so compiled code reads them and checkpoints carry them.
        self.env_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="env_steps")
        self.gradient_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="grad_steps")
        self.generator = tf.random.Generator.from_seed(seed)
        self.learning_rate = as_schedule(hparams.lr)
        self.optimizer = make_optimizer(
            hparams.optimizer, self.learning_rate.value(0), hparams.adam_epsilon
        )
        self._build()
        self.optimizer.build(self._trainable_variables())
        obs_spec = tf.TensorSpec([None, *spec.obs_shape], tf.as_dtype(spec.obs_dtype))
        self._greedy_fn = tf.function(
            lambda obs: self._act(obs, explore=False), input_signature=[obs_spec]
        )

    # ----------------------------------------------------------------------- public API
    def act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        """Actions for a batch of observations. TF code: call it inside tf.function."""
        return self._act(obs, explore)

    def act_with_info(self, obs: tf.Tensor) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        """Exploring actions plus per-step tensors the agent wants back in `observe`.

        On-policy agents return e.g. {"log_prob": ..., "value": ...} computed while acting,
        so the learner does not recompute them. TF code: the driver calls it in its loop.
        """
        return self._act_with_info(obs)

    def greedy_actions(self, obs: np.ndarray) -> np.ndarray:
        """Evaluation-time actions for a numpy batch (one compiled call)."""
        return self._greedy_fn(obs).numpy()

    def observe(self, transition: Batch) -> None:
        """Feeds one vector-env step: obs, action, reward, next_obs, terminated, truncated,
        plus the tensors `act_with_info` returned for this step (as numpy arrays).

        `next_obs` is the true next observation (the final one where an episode ended).
        """
        self._observe(transition)

    def end_all_episodes(self) -> None:
        """The trainer cut every running episode (a checkpoint boundary): flush partial data.

        Cut episodes count as truncations, so their partial transitions bootstrap.
        """
        self._end_all_episodes()

    def update(self) -> Metrics:
        """Learns from what was observed; returns metrics, or {} when not ready yet."""
        if not self._ready_to_update():
            return {}
        return self._update()

    @property
    def steps_per_iteration(self) -> int:
        """Vector-env steps the trainer collects between two `update` calls."""
        return max(1, self.hparams.train_every // self.spec.num_envs)

    def metrics(self) -> Metrics:
        """Agent state worth logging at any time (learning rate, exploration, ...)."""
        step = self.env_steps
        return {
            "train/learning_rate": float(self.learning_rate(self.gradient_steps)),
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
        loss_fn: Callable[[], tuple[tf.Tensor, dict[str, tf.Tensor]]],
        variables: list[tf.Variable],
    ) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
        """One optimizer step on `loss_fn()`; returns (loss, gradient norm, aux outputs).

        The learning rate is set from its schedule at the current gradient step first, so a
        schedule takes effect inside compiled multi-step loops.
        """
        self.optimizer.learning_rate.assign(self.learning_rate(self.gradient_steps))
        with tf.GradientTape() as tape:
            loss, aux = loss_fn()
        grads = tape.gradient(loss, variables)
        grad_norm = tf.linalg.global_norm(grads)
        if self.hparams.max_grad_norm > 0:
            grads, _ = tf.clip_by_global_norm(grads, self.hparams.max_grad_norm, grad_norm)
        self.optimizer.apply_gradients(zip(grads, variables, strict=False))
        self.gradient_steps.assign_add(1)
        return loss, grad_norm, aux

    # ------------------------------------------------------------------------- hooks
    def _build(self) -> None:
        raise NotImplementedError

    def _trainable_variables(self) -> list[tf.Variable]:
        raise NotImplementedError

    def _act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        raise NotImplementedError

    def _act_with_info(self, obs: tf.Tensor) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        return self._act(obs, explore=True), {}

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
