"""DQN with the Rainbow switches that are pure configuration: double-Q, dueling, prioritized
replay, n-step returns, hard or Polyak target updates.

Mnih et al. 2015, "Human-level control through deep reinforcement learning" (Nature 518);
van Hasselt et al. 2015, https://arxiv.org/abs/1509.06461 (double Q);
Wang et al. 2016, https://arxiv.org/abs/1511.06581 (dueling);
Schaul et al. 2015, https://arxiv.org/abs/1511.05952 (prioritized replay);
Hessel et al. 2017, https://arxiv.org/abs/1710.02298 (n-step, the combination).

Learning runs `gradient_steps` optimizer steps inside ONE compiled call per `update`: the K
batches are sampled from the numpy replay up front (stacked [K, B, ...]), so the TF dispatch
cost is paid once per K steps. With prioritized replay the priorities of all K batches are
written back after the call (each batch was sampled with priorities at most K-1 steps stale).
"""

from __future__ import annotations

import inspect

import numpy as np
import tensorflow as tf

from rl.agents.action_functions import epsilon_greedy, greedy
from rl.agents.base import Agent
from rl.agents.gradient_functions import double_q_learning_target, q_learning_target, td_loss
from rl.hparams import as_schedule
from rl.memory import NStepAccumulator
from rl.models import QNetwork
from rl.registry import get_memory, register_agent
from rl.types import Batch, Metrics


@register_agent("dqn")
class DQN(Agent):
    """Deep Q-Network agent for discrete actions."""

    # ---------------------------------------------------------------------- building
    def _build(self) -> None:
        hp, spec = self.hparams, self.spec
        if not spec.discrete:
            from rl.errors import UserError

            raise UserError(
                f"agent 'dqn' needs a discrete action space; env {spec.env_id!r} has Box "
                "actions (use a continuous-control agent)"
            )

        def q_network(name: str) -> QNetwork:
            net = QNetwork(
                spec.num_actions, hp.model, hp.hidden_sizes, hp.activation, hp.dueling, name=name
            )
            net(tf.zeros([1, *spec.obs_shape], spec.obs_dtype))  # create the variables now
            return net

        self.q_network = q_network("q_network")
        self.target_network = q_network("target_network")
        self._sync_target(tau=1.0)
        self.epsilon = as_schedule(hp.epsilon)
        self.per_beta = as_schedule(hp.per_beta)

        fields = {
            "obs": (spec.obs_shape, spec.obs_dtype),
            "action": ((), np.dtype(np.int64)),
            "reward": ((), np.dtype(np.float32)),
            "next_obs": (spec.obs_shape, spec.obs_dtype),
            "discount": ((), np.dtype(np.float32)),
        }
        memory_cls = get_memory(hp.memory)
        options = {"alpha": hp.per_alpha, "epsilon": hp.per_epsilon}
        accepted = inspect.signature(memory_cls).parameters
        self.replay = memory_cls(
            capacity=hp.buffer_size,
            fields=fields,
            seed=self.seed,
            **{k: v for k, v in options.items() if k in accepted},
        )
        self.n_step = NStepAccumulator(
            n=hp.n_step, gamma=hp.gamma, num_envs=spec.num_envs, fields=fields
        )
        batch_spec = {
            "obs": tf.TensorSpec([None, None, *spec.obs_shape], tf.as_dtype(spec.obs_dtype)),
            "action": tf.TensorSpec([None, None], tf.int64),
            "reward": tf.TensorSpec([None, None], tf.float32),
            "next_obs": tf.TensorSpec([None, None, *spec.obs_shape], tf.as_dtype(spec.obs_dtype)),
            "discount": tf.TensorSpec([None, None], tf.float32),
            "weights": tf.TensorSpec([None, None], tf.float32),
        }
        self._train_fn = tf.function(
            self._train_on_batches, input_signature=[batch_spec], jit_compile=hp.jit_compile
        )

    def _trainable_variables(self) -> list[tf.Variable]:
        return self.q_network.trainable_variables

    def _sync_target(self, tau: float | tf.Tensor) -> None:
        for target, online in zip(
            self.target_network.variables, self.q_network.variables, strict=True
        ):
            target.assign(tau * online + (1.0 - tau) * target)

    # ------------------------------------------------------------------------ acting
    def _act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        q_values = self.q_network(obs)
        if not explore:
            return greedy(q_values)
        return epsilon_greedy(q_values, self.generator, self._current_epsilon())

    def _current_epsilon(self) -> tf.Tensor:
        # Uniformly random actions until learning starts (as SB3 and Dopamine do).
        return tf.where(
            self.env_steps < self.hparams.learning_starts,
            1.0,
            self.epsilon(self.env_steps),
        )

    def _observe(self, transition: Batch) -> None:
        completed = self.n_step.add(**transition)
        if len(completed["reward"]):
            self.replay.add_batch(completed)

    def _end_all_episodes(self) -> None:
        completed = self.n_step.flush()
        if len(completed["reward"]):
            self.replay.add_batch(completed)

    # ---------------------------------------------------------------------- learning
    def _ready_to_update(self) -> bool:
        hp = self.hparams
        return (
            len(self.replay) >= max(hp.batch_size, 1)
            and int(self.env_steps.numpy()) >= hp.learning_starts
        )

    def _update(self) -> Metrics:
        hp = self.hparams
        beta = float(self.per_beta(self.env_steps))
        batch = self.replay.sample(hp.batch_size, num_batches=hp.gradient_steps, beta=beta)
        indices = batch.pop("indices")
        out = self._train_fn(batch)
        if hp.memory == "prioritized":
            self.replay.update_priorities(indices, np.abs(out["td_error"].numpy()))
        return {
            "train/loss": float(out["loss"]),
            "train/grad_norm": float(out["grad_norm"]),
            "train/q_mean": float(out["q_mean"]),
        }

    def _train_on_batches(self, batch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """Runs one gradient step per leading index of `batch` ([K, B, ...])."""
        hp = self.hparams
        num_batches = tf.shape(batch["reward"])[0]
        td_errors = tf.TensorArray(tf.float32, size=num_batches)
        loss_sum = grad_norm_sum = q_sum = tf.constant(0.0)
        for k in tf.range(num_batches):
            if self.gradient_steps % hp.target_update_period == 0:
                self._sync_target(hp.tau)
            sample = {key: value[k] for key, value in batch.items()}
            loss, grad_norm, aux = self._gradient_step(
                lambda sample=sample: self._loss(sample), self.q_network.trainable_variables
            )
            td_errors = td_errors.write(k, aux["td_error"])
            loss_sum += loss
            grad_norm_sum += grad_norm
            q_sum += aux["q_mean"]
        count = tf.cast(num_batches, tf.float32)
        return {
            "loss": loss_sum / count,
            "grad_norm": grad_norm_sum / count,
            "q_mean": q_sum / count,
            "td_error": td_errors.stack(),
        }

    def _loss(self, sample: dict[str, tf.Tensor]) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        next_q_target = self.target_network(sample["next_obs"])
        if self.hparams.double_q:
            td_target = double_q_learning_target(
                sample["reward"],
                sample["discount"],
                next_q_target,
                self.q_network(sample["next_obs"]),
            )
        else:
            td_target = q_learning_target(sample["reward"], sample["discount"], next_q_target)
        q_values = self.q_network(sample["obs"])
        loss, td_error = td_loss(
            q_values, sample["action"], td_target, sample["weights"], self.hparams.td_loss
        )
        return loss, {"td_error": td_error, "q_mean": tf.reduce_mean(q_values)}

    # ----------------------------------------------------------------------- logging
    def _metrics(self, env_steps: tf.Variable) -> Metrics:
        return {"train/epsilon": float(self._current_epsilon())}

    def _numpy_state_parts(self) -> dict[str, object]:
        return {"replay": self.replay, "n_step": self.n_step}
