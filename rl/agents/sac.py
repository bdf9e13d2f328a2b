"""Soft Actor-Critic with automatic entropy tuning.

Haarnoja et al. 2018, https://arxiv.org/abs/1801.01290 and https://arxiv.org/abs/1812.05905
(twin critics, learned temperature with target entropy -|A|). Per gradient step, as in SB3: a
critic step, a reparameterized actor step, a temperature step, then Polyak-averaged targets.
"""

from __future__ import annotations

import math

import tensorflow as tf

from rl.agents.gradient_functions import (
    sac_actor_loss,
    sac_alpha_loss,
    soft_q_target,
    squashed_gaussian_sample,
)
from rl.agents.off_policy_continuous import OffPolicyContinuousAgent, polyak_update
from rl.agents.stateless_generator import StatelessGenerator
from rl.models import GaussianActor
from rl.models.continuous import num_action_dims
from rl.registry import register_agent


@register_agent("sac")
class SAC(OffPolicyContinuousAgent):
    """Tanh-squashed Gaussian actor, `num_critics` critics, learned or fixed temperature."""

    loss_metrics = ("loss", "actor_loss", "alpha_loss", "alpha", "entropy", "q_mean")
    stochastic_policy = True  # a tanh-squashed Gaussian
    # Batch-wise losses; every random number is drawn on the whole batch, outside replicas.
    supports_strategies = True

    def _build_networks(self) -> None:
        hp, spec = self.hparams, self.spec
        self.actor = GaussianActor(
            spec, hp.model, hp.hidden_sizes, hp.activation, self.obs_normalizer, name="actor"
        )
        self.actor(tf.zeros([1, *spec.obs_shape], spec.obs_dtype))
        self._build_critics(hp.num_critics)
        self.log_alpha = tf.Variable(
            math.log(hp.alpha_init), trainable=hp.auto_alpha, name="log_alpha"
        )
        self.default_target_entropy = -float(num_action_dims(spec))  # -|A|, for None

    # ------------------------------------------------------------------------ acting
    def _sample(
        self, obs: tf.Tensor, generator: tf.random.Generator | StatelessGenerator | None = None
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """Reparameterized action [B, ...] and log pi [B] (noise: `generator` or the agent's)."""
        mean, log_std = self.actor(obs)
        noise = (generator or self.generator).normal(tf.shape(mean))
        return self._squashed_sample(obs, noise, (mean, log_std))

    def _squashed_sample(
        self, obs: tf.Tensor, noise: tf.Tensor, actor_out: tuple[tf.Tensor, tf.Tensor] | None = None
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """`_sample` with its standard normal `noise` [B, A] given (drawn elsewhere)."""
        mean, log_std = actor_out if actor_out is not None else self.actor(obs)
        low, high = tf.reshape(self.action_low, [-1]), tf.reshape(self.action_high, [-1])
        action, log_prob = squashed_gaussian_sample(mean, log_std, noise, low, high)
        return tf.reshape(action, [tf.shape(obs)[0], *self.spec.action_shape]), log_prob

    def _policy_action(self, obs: tf.Tensor) -> tf.Tensor:
        mean, _ = self.actor(obs)
        low, high = tf.reshape(self.action_low, [-1]), tf.reshape(self.action_high, [-1])
        action = (high + low) / 2.0 + (high - low) / 2.0 * tf.tanh(mean)
        return tf.reshape(action, [tf.shape(obs)[0], *self.spec.action_shape])

    def _explore_action(self, obs: tf.Tensor) -> tf.Tensor:
        return self._sample(obs)[0]

    def _sampled_policy_step(
        self, obs: tf.Tensor, state: tf.Tensor, generator: StatelessGenerator
    ) -> tuple[tf.Tensor, tf.Tensor]:
        return self._sample(obs, generator)[0], state

    # ---------------------------------------------------------------------- learning
    def _build_learning(self) -> None:
        super()._build_learning()
        self.actor_optimizer = self.learner.another_optimizer(self.actor.trainable_variables)
        self.alpha_optimizer = self.learner.another_optimizer([self.log_alpha])

    def _train_step(self, sample: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        alpha = tf.exp(self.log_alpha)
        next_action, next_log_prob = self._sample(sample["next_obs"])
        next_q = self.critics_target(sample["next_obs"], next_action)
        td_target = soft_q_target(
            sample["reward"], sample["discount"], next_q, next_log_prob, alpha
        )

        # The actor's reparameterization noise, drawn on the whole batch: the losses draw nothing.
        actor_noise = self.generator.normal(
            [tf.shape(sample["obs"])[0], num_action_dims(self.spec)]
        )
        loss, aux = self._critic_step(sample, td_target)

        def actor_loss_fn(part):
            action, log_prob = self._squashed_sample(part["obs"], part["noise"])
            q_values = self.critics(part["obs"], action)
            # alpha from the variable (unchanged until the temperature step below)
            return sac_actor_loss(q_values, log_prob, tf.exp(self.log_alpha)), {
                "log_prob": log_prob
            }

        actor_batch = {"obs": sample["obs"], "noise": actor_noise}
        actor_loss, actor_aux = self.learner.uncounted_step(
            self.actor_optimizer, actor_loss_fn, self.actor.trainable_variables, actor_batch
        )
        log_prob = actor_aux["log_prob"]

        target_entropy = self.hparam_values.now("target_entropy", self.learner.gradient_steps)
        if target_entropy is None:
            target_entropy = self.default_target_entropy

        def alpha_loss_fn(part):
            return sac_alpha_loss(self.log_alpha, part["log_prob"], target_entropy), {}

        if self.hparams.auto_alpha:
            alpha_loss, _ = self.learner.uncounted_step(
                self.alpha_optimizer, alpha_loss_fn, [self.log_alpha], {"log_prob": log_prob}
            )
        else:
            alpha_loss, _ = alpha_loss_fn({"log_prob": log_prob})  # logged only
        tau = self.hparam_values.at("tau", self.learner.gradient_steps)
        polyak_update(self.critics_target.variables, self.critics.variables, tau)
        return {
            "loss": loss,
            "actor_loss": actor_loss,
            "alpha_loss": alpha_loss,
            "alpha": alpha,
            "entropy": -tf.reduce_mean(log_prob),
            **aux,
        }
