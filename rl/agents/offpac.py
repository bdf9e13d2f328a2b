"""Off-PAC: an actor-critic that learns from a replay of its own older policies' trajectories.

Degris, White & Sutton 2012, "Off-Policy Actor-Critic", ICML, https://arxiv.org/abs/1205.4839.
The behaviour policy b is the agent's own policy as it was when it acted, kept with log b(a|s)
in a replay of trajectory segments, so most data are several updates old (as in ACER, Wang et
al. 2016, https://arxiv.org/abs/1611.01224); the losses are `rl.agents.gradient_functions.offpac`.
`update` samples `gradient_steps` x `batch_size` segments and runs all those steps in one
compiled call, each re-evaluating its segments under the current weights.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rl.agents.actor_critic_agent import ActorCriticAgent
from rl.agents.gradient_functions import entropy_bonus, value_loss
from rl.agents.gradient_functions.offpac import offpac_actor_loss, offpac_critic_targets
from rl.agents.on_policy import normalize, update_epochs
from rl.errors import UserError
from rl.memory import UniformReplay
from rl.registry import register_agent
from rl.rollout.reevaluate import bootstrap_values, reevaluate
from rl.rollout.returns import fold_truncation
from rl.rollout.rollout import Rollout
from rl.types import LossAndAux, Metrics, TensorBatch

# What a replay row holds: one env's T steps ([T, ...]) and its bootstrap observation.
SEGMENT_FIELDS = ("obs", "action", "reward", "terminated", "truncated", "final_obs", "log_prob")


@register_agent("offpac")
class OffPAC(ActorCriticAgent):
    """Off-policy actor-critic with experience replay, for discrete and Box actions."""

    records_log_prob = True  # log b(a|s) of the acting weights: the learner moves on
    supports_strategies = True  # the loss is a mean over B replayed segments on axis 0

    loss_metrics = (
        "policy_loss",
        "value_loss",
        "entropy",
        "rho_mean",
        "rho_clip_fraction",
        "value_target_mean",
    )

    # ---------------------------------------------------------------------- building
    def _build(self) -> None:
        hp, spec = self.hparams, self.spec
        for key in ("replay_capacity", "batch_size", "gradient_steps"):
            if getattr(hp, key) < 1:
                raise UserError(f"{key} must be >= 1, got {getattr(hp, key)}")
        self._build_actor_critic()
        self.segment_length = self.steps_per_iteration  # T
        action_dtype = np.dtype(np.int64) if spec.discrete else np.dtype(np.float32)
        self._build_rollout(self.segment_length, with_value=False)
        t, obs, act = self.segment_length, tuple(spec.obs_shape), tuple(spec.action_shape)
        self._segment_fields = shapes = {
            "obs": ((t, *obs), spec.obs_dtype),
            "action": ((t, *act), action_dtype),
            "reward": ((t,), np.float32),
            "terminated": ((t,), np.bool_),
            "truncated": ((t,), np.bool_),
            "final_obs": ((t, *obs), spec.obs_dtype),
            "log_prob": ((t,), np.float32),
            "last_next_obs": (obs, spec.obs_dtype),
        }
        lead = [hp.gradient_steps, hp.batch_size]  # the whole update's segments in one call
        self.batch_spec = {
            name: tf.TensorSpec([*lead, *shape], tf.as_dtype(dtype))
            for name, (shape, dtype) in shapes.items()
        }

    def _build_learning(self) -> None:
        """The replay of whole segments, and the compiled update on [K, B] of them."""
        self.replay = UniformReplay(self.hparams.replay_capacity, self._segment_fields, self.seed)
        super()._build_learning()

    def _loss_sums_across_replicas(self) -> bool:
        return self.hparams.normalize_advantage  # whole-minibatch mean and std (`normalize`)

    def _numpy_state_parts(self) -> dict[str, object]:
        return {"rollout": self.rollout, "replay": self.replay}

    # ---------------------------------------------------------------------- learning
    def _update(self) -> Metrics:
        hp = self.hparams
        data = self.rollout.data()
        rows = {name: np.swapaxes(data[name], 0, 1) for name in SEGMENT_FIELDS}  # [N, T, ...]
        rows["last_next_obs"] = data["last_next_obs"]
        self.replay.add_batch(rows)
        self.rollout.reset()
        if int(self.env_steps.numpy()) < hp.learning_starts:
            return {}
        batch = self.replay.sample(hp.batch_size, num_batches=hp.gradient_steps)
        del batch["indices"], batch["weights"]  # uniform replay: every weight is 1
        out = self.train_on_batch(batch)
        metrics = {f"train/{name}": float(value) for name, value in out.items()}
        metrics["train/replay_size"] = float(len(self.replay))
        return metrics

    def _train(self, batch: TensorBatch) -> dict[str, tf.Tensor]:
        steps = self.hparams.gradient_steps

        def step(indices: tf.Tensor, k: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, dict]:
            segments = {name: value[indices[k]] for name, value in batch.items()}  # [B, T, ...]
            return self.learner.gradient_step(self.loss, self._trainable_variables(), segments)

        # One pass over the K sampled batches, in order.
        return update_epochs(
            1, steps, lambda: tf.range(steps), step, self.loss_metrics, tf.constant(0.0)
        )

    def loss(self, segments: TensorBatch) -> LossAndAux:
        """The Off-PAC loss of B replayed segments ([B, T, ...]) under the current weights."""
        hp = self.hparams
        rollout = Rollout.from_batch_major(segments)  # [T, B], log_prob = log b(a|s)
        current = reevaluate(rollout, self.model)  # log pi(a|s), V(s), H(pi(.|s))
        final_values, bootstrap = bootstrap_values(rollout, self.model)
        rewards = fold_truncation(
            rollout.reward, rollout.truncated, tf.stop_gradient(final_values), hp.gamma
        )
        rho_bar = self.hparam_values.now("rho_bar", self.learner.gradient_steps)
        value_targets, advantages = offpac_critic_targets(
            rewards,
            current.value,
            rollout.discounts(hp.gamma),
            tf.stop_gradient(bootstrap),
            current.log_prob - rollout.log_prob,
            lambda_=self.hparam_values.now("trace_lambda", self.learner.gradient_steps),
            rho_bar=rho_bar,
            c_bar=self.hparam_values.now("c_bar", self.learner.gradient_steps),
        )
        if hp.normalize_advantage:
            advantages = normalize(advantages, tf.ones_like(advantages))
        policy_loss, rho_mean, rho_clip_fraction = offpac_actor_loss(
            current.log_prob, rollout.log_prob, advantages, rho_bar
        )
        critic_loss = value_loss(current.value, value_targets)
        entropy = entropy_bonus(current.entropy)
        loss = self._actor_critic_loss(policy_loss, critic_loss, entropy)
        return loss, {
            "policy_loss": policy_loss,
            "value_loss": critic_loss,
            "entropy": entropy,
            "rho_mean": rho_mean,
            "rho_clip_fraction": rho_clip_fraction,
            "value_target_mean": tf.reduce_mean(value_targets),
        }
