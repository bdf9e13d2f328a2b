"""Advantage actor-critic (A2C), the synchronous variant of A3C.

Mnih et al. 2016, "Asynchronous Methods for Deep Reinforcement Learning",
https://arxiv.org/abs/1602.01783: n-step advantages (GAE with lambda = 1) and one gradient step
on the whole batch of loss = -log pi(a|s) A + vf_coef * 0.5 (V - R)^2 - ent_coef * H(pi(.|s)).
"""

from __future__ import annotations

import math

from rl.agents.gradient_functions import entropy_bonus, policy_gradient_loss, value_loss
from rl.agents.on_policy import OnPolicyAgent, PolicyOutputs
from rl.registry import register_agent
from rl.types import HparamTensors, LossAndAux, TensorBatch


@register_agent("a2c")
class A2C(OnPolicyAgent):
    """Synchronous advantage actor-critic."""

    def _build(self) -> None:
        super()._build()
        if self.hparams.orthogonal_init:
            self.model.orthogonal_torsos(math.sqrt(2.0))

    def loss(
        self, minibatch: TensorBatch, outputs: PolicyOutputs, member: HparamTensors | None = None
    ) -> LossAndAux:
        mask = minibatch["mask"]
        policy_loss = policy_gradient_loss(outputs.log_prob, minibatch["advantage"], mask)
        critic_loss = value_loss(outputs.value, minibatch["return"], mask=mask)
        entropy = entropy_bonus(outputs.entropy, mask)
        loss = self._actor_critic_loss(policy_loss, critic_loss, entropy, member)
        return loss, {"policy_loss": policy_loss, "value_loss": critic_loss, "entropy": entropy}
