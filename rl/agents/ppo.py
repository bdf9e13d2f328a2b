"""Proximal Policy Optimization with the clipped surrogate objective.

Schulman, Wolski, Dhariwal, Radford & Klimov 2017, "Proximal Policy Optimization Algorithms",
https://arxiv.org/abs/1707.06347, with the details of OpenAI baselines' PPO2 and SB3. With
`target_kl` the update stops as in SB3 (CleanRL checks once per epoch): a minibatch whose approx
KL exceeds 1.5 * target_kl is skipped with the rest of the update.

loss = -min(ratio A, clip(ratio, 1 +- eps) A) + vf_coef * value_loss - ent_coef * entropy
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from rl.agents.gradient_functions import entropy_bonus, ppo_clip_loss, value_loss
from rl.agents.on_policy import OnPolicyAgent, PolicyOutputs
from rl.distribute import replicated_loss
from rl.registry import register_agent
from rl.types import HparamTensors, LossAndAux, Metrics, TensorBatch


@register_agent("ppo")
class PPO(OnPolicyAgent):
    """PPO-clip for discrete (categorical) and Box (diagonal Gaussian) actions."""

    loss_metrics = ("policy_loss", "value_loss", "entropy", "clip_fraction", "approx_kl")

    kl_stop_factor = 1.5  # SB3's: stop once a minibatch's approx KL exceeds 1.5 * target_kl

    @property
    def stops_early(self) -> bool:
        """Whether an update may end before its n_epochs x minibatches (`target_kl` is set)."""
        return self.hparams.target_kl is not None

    def _update_stop_rule(
        self, minibatch: Callable[[tf.Tensor, tf.Tensor], TensorBatch]
    ) -> Callable[[tf.Tensor, tf.Tensor], tf.Tensor] | None:
        if not self.stops_early:
            return None

        def kl_too_far(indices: tf.Tensor, k: tf.Tensor) -> tf.Tensor:
            # The step's approx KL, no gradient; one all-reduce: every replica decides the same.
            loss_fn, inputs = self._step_loss_and_inputs(minibatch(indices, k))

            def approx_kl(part: TensorBatch) -> LossAndAux:
                return loss_fn(part)[1]["approx_kl"], {}

            if self.learner.distributed:
                kl = replicated_loss(self.learner.strategy, approx_kl, inputs, self._loss_weight)
            else:
                kl = approx_kl(inputs)[0]
            target_kl = self.hparam_values.now("target_kl", self.learner.gradient_steps)
            return kl > self.kl_stop_factor * target_kl

        return kl_too_far

    def loss(
        self, minibatch: TensorBatch, outputs: PolicyOutputs, member: HparamTensors | None = None
    ) -> LossAndAux:
        mask = minibatch["mask"]
        clip_range = self.hparam_values.at("clip_range", self.learner.gradient_steps, member)
        policy_loss, clip_fraction, approx_kl = ppo_clip_loss(
            outputs.log_prob, minibatch["old_log_prob"], minibatch["advantage"], clip_range, mask
        )
        clip_range_vf = self.hparam_values.now("clip_range_vf", self.learner.gradient_steps, member)
        returns, old_value = minibatch["return"], minibatch["old_value"]
        critic_loss = value_loss(outputs.value, returns, old_value, clip_range_vf, mask)
        entropy = entropy_bonus(outputs.entropy, mask)
        loss = self._actor_critic_loss(policy_loss, critic_loss, entropy, member)
        return loss, {
            "policy_loss": policy_loss,
            "value_loss": critic_loss,
            "entropy": entropy,
            "clip_fraction": clip_fraction,
            "approx_kl": approx_kl,
        }

    def _metrics(self, env_steps: tf.Variable) -> Metrics:
        if self.learner is None:  # an acting-only build: the clip range is the learner's
            return {}
        clip_range = self.hparam_values.at("clip_range", self.learner.gradient_steps)
        return {"train/clip_range": float(clip_range)}
