"""TD3, and DDPG as TD3 with its three tricks switched off (a configuration, as in SB3).

Fujimoto, van Hoof & Meger 2018, "Addressing Function Approximation Error in Actor-Critic
Methods", https://arxiv.org/abs/1802.09477; Lillicrap et al. 2015 (DDPG),
https://arxiv.org/abs/1509.02971: the "ddpg" sets use one critic, no smoothing, policy_delay 1.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rl.agents.function_slots import FunctionSlot, resolve_function
from rl.agents.gradient_functions import (
    clipped_double_q_target,
    deterministic_actor_loss,
    smoothed_target_action,
)
from rl.agents.off_policy_continuous import OffPolicyContinuousAgent, polyak_update
from rl.models import DeterministicActor
from rl.registry import action_functions, register_agent
from rl.types import Batch


@register_agent("td3")
class TD3(OffPolicyContinuousAgent):
    """Deterministic actor + `num_critics` critics, with TD3's switches in hparams."""

    loss_metrics = ("loss", "actor_loss", "q_mean")
    # Batch-wise losses; the target smoothing noise is drawn on the whole batch, outside replicas.
    supports_strategies = True
    function_slots = {
        "action_function": FunctionSlot(action_functions, ("action_noise", "stateful_action_noise"))
    }

    def _build_networks(self) -> None:
        hp, spec = self.hparams, self.spec
        self.action_function = resolve_function(self, "action_function")
        # Stateful noise (OU) keeps `noise_state` per env copy, zeroed at episode ends.
        self.noise_is_stateful = (
            action_functions.role(hp.action_function) == "stateful_action_noise"
        )
        obs = tf.zeros([1, *spec.obs_shape], spec.obs_dtype)

        def actor(name: str) -> DeterministicActor:
            net = DeterministicActor(
                spec, hp.model, hp.hidden_sizes, hp.activation, self.obs_normalizer, name=name
            )
            net(obs)
            return net

        self.actor, self.actor_target = actor("actor"), actor("actor_target")
        self._build_critics(hp.num_critics)
        polyak_update(self.actor_target.variables, self.actor.variables, 1.0)
        # OU state per *training* env copy (test mode restores it too); unused with Gaussian noise.
        self.noise_state = tf.Variable(
            tf.zeros([hp.num_envs, *spec.action_shape]), trainable=False, name="noise_state"
        )
        # The latest policy step's loss: what a critic-only step (policy_delay) logs.
        self.last_actor_loss = tf.Variable(0.0, trainable=False, name="last_actor_loss")

    # ------------------------------------------------------------------------ acting
    def _policy_action(self, obs: tf.Tensor) -> tf.Tensor:
        return self.actor(obs)

    def _explore_action(self, obs: tf.Tensor) -> tf.Tensor:
        action = self.actor(obs)
        sigma = self.hparam_values.at("action_noise_std", self.env_steps)
        low, high = self.action_low, self.action_high
        if not self.noise_is_stateful:
            return self.action_function(action, self.generator, sigma, low, high)
        # Read after `obs` exists: `observe` zeroes the rows of envs whose episode just ended.
        with tf.control_dependencies([obs]):
            state = self.noise_state.read_value()
        theta = self.hparam_values.now("ou_theta", self.env_steps)
        noisy, state = self.action_function(action, self.generator, state, theta, sigma, low, high)
        self.noise_state.assign(state)
        return noisy

    def _observe(self, transition: Batch) -> None:
        super()._observe(transition)
        if self.noise_is_stateful:
            done = np.logical_or(transition["terminated"], transition["truncated"])
            if done.any():
                keep = (~done).astype(np.float32).reshape([-1] + [1] * len(self.spec.action_shape))
                self.noise_state.assign(self.noise_state.numpy() * keep)

    def _end_all_episodes(self) -> None:
        super()._end_all_episodes()
        self.noise_state.assign(tf.zeros_like(self.noise_state))

    # ---------------------------------------------------------------------- learning
    def _build_learning(self) -> None:
        super()._build_learning()
        self.actor_optimizer = self.learner.another_optimizer(self.actor.trainable_variables)

    def _train_step(self, sample: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        next_action = self.actor_target(sample["next_obs"])
        half_range = (self.action_high - self.action_low) / 2.0
        smoothing = self.hparam_values.at("target_policy_noise", self.learner.gradient_steps)
        noise = self.generator.normal(tf.shape(next_action)) * smoothing * half_range
        clip = self.hparam_values.at("target_noise_clip", self.learner.gradient_steps) * half_range
        next_action = smoothed_target_action(
            next_action, noise, clip, self.action_low, self.action_high
        )
        next_q = self.critics_target(sample["next_obs"], next_action)
        td_target = clipped_double_q_target(sample["reward"], sample["discount"], next_q)

        loss, aux = self._critic_step(sample, td_target)

        def actor_step() -> tf.Tensor:
            def actor_loss_fn(part):
                action = self.actor(part["obs"])
                return deterministic_actor_loss(self.critics.first(part["obs"], action)), {}

            actor_batch = {"obs": sample["obs"]}
            actor_loss, _ = self.learner.uncounted_step(
                self.actor_optimizer, actor_loss_fn, self.actor.trainable_variables, actor_batch
            )
            tau = self.hparam_values.at("tau", self.learner.gradient_steps)
            polyak_update(self.critics_target.variables, self.critics.variables, tau)
            polyak_update(self.actor_target.variables, self.actor.variables, tau)
            self.last_actor_loss.assign(tf.cast(actor_loss, tf.float32))
            return self.last_actor_loss.read_value()

        # Delayed policy updates: gradient_steps was just incremented by the critic step.
        delayed = self.learner.gradient_steps % self.hparams.policy_delay == 0
        actor_loss = tf.cond(delayed, actor_step, self.last_actor_loss.read_value)
        return {"loss": loss, "actor_loss": actor_loss, **aux}

    def _metrics(self, env_steps: tf.Variable) -> dict[str, float]:
        if not self.noise_is_stateful:
            return {}
        return {"train/ou_state_abs": float(tf.reduce_mean(tf.abs(self.noise_state)))}


register_agent("ddpg", TD3)
