"""REINFORCE: Monte-Carlo policy gradient, with or without a learned value baseline.

Williams 1992, "Simple Statistical Gradient-Following Algorithms for Connectionist
Reinforcement Learning", Machine Learning 8, https://doi.org/10.1007/BF00992696; the baseline
V(s) as A2C's critic (Mnih et al. 2016, https://arxiv.org/abs/1602.01783).

Batches are a fixed `train_every` env steps, so episodes straddle batches: the steps after an
env's last episode end bootstrap from V(s_T) with a baseline, and are dropped from the loss
without one (so make `train_every // num_envs` a few episode lengths long).
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.gradient_functions import entropy_bonus, policy_gradient_loss, value_loss
from rl.agents.on_policy import OnPolicyAgent, PolicyOutputs
from rl.registry import register_agent
from rl.types import HparamTensors, LossAndAux, TensorBatch


@register_agent("reinforce")
class Reinforce(OnPolicyAgent):
    """REINFORCE; `baseline` switches the learned value baseline on."""

    @property
    def uses_value(self) -> bool:  # type: ignore[override]
        return self.hparams.baseline

    def sample_mask(self, batch: TensorBatch) -> tf.Tensor:
        if self.hparams.baseline:
            return tf.ones_like(batch["reward"])
        ended = tf.cast(tf.logical_or(batch["terminated"], batch["truncated"]), tf.float32)
        # 1 where an episode end lies at or after step t in the same env (complete return).
        return tf.cast(tf.math.cumsum(ended, axis=0, reverse=True) > 0, tf.float32)

    def loss(
        self, minibatch: TensorBatch, outputs: PolicyOutputs, member: HparamTensors | None = None
    ) -> LossAndAux:
        hp, mask = self.hparams, minibatch["mask"]
        policy_loss = policy_gradient_loss(outputs.log_prob, minibatch["advantage"], mask)
        entropy = entropy_bonus(outputs.entropy, mask)
        step = self.learner.gradient_steps
        loss = policy_loss - self.hparam_values.at("ent_coef", step, member) * entropy
        aux = {"policy_loss": policy_loss, "entropy": entropy}
        if hp.baseline:
            aux["value_loss"] = value_loss(outputs.value, minibatch["return"], mask=mask)
            loss += self.hparam_values.at("vf_coef", step, member) * aux["value_loss"]
        return loss, aux
