"""C51: DQN that learns each action's return distribution on a fixed support of atoms.

Bellemare, Dabney & Munos 2017, "A Distributional Perspective on Reinforcement Learning",
https://arxiv.org/abs/1707.06887; with DQN's switches on this is Rainbow (Hessel et al. 2017,
https://arxiv.org/abs/1710.02298). Three DQN hooks change: `num_atoms` logits per action, Q as
the distribution's mean, and the distributional loss (its per-sample value is the priority).
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.dqn import DQN
from rl.agents.function_slots import FunctionSlot
from rl.agents.gradient_functions import (
    categorical_q_values,
    categorical_support,
    categorical_target,
)
from rl.errors import UserError
from rl.models import QNetwork
from rl.registry import gradient_functions, register_agent
from rl.types import LossAndAux


@register_agent("c51")
class C51(DQN):
    """Categorical distributional DQN; Rainbow is this with every DQN switch on."""

    masks_actions = False  # the distributional targets are not masked yet

    # `loss` is a distributional one: a TD loss on scalar Q-values does not fit here.
    function_slots = {
        **DQN.function_slots,
        "loss": FunctionSlot(gradient_functions, ("distributional_loss",)),
    }

    def _build(self) -> None:
        hp = self.hparams
        if hp.num_atoms < 2:
            raise UserError(f"num_atoms must be >= 2 for c51, got {hp.num_atoms}")
        if not hp.v_min < hp.v_max:
            raise UserError(
                f"c51 needs v_min < v_max (the return support), got v_min={hp.v_min}, "
                f"v_max={hp.v_max}"
            )
        self.support = categorical_support(hp.v_min, hp.v_max, hp.num_atoms)
        super()._build()

    def _q_network_options(self) -> dict:
        return {**super()._q_network_options(), "num_atoms": self.hparams.num_atoms}

    def _q_values(self, network: QNetwork, obs: tf.Tensor, noisy: bool = True) -> tf.Tensor:
        return categorical_q_values(network(obs, noisy=noisy), self.support)

    def loss(self, sample: dict[str, tf.Tensor]) -> LossAndAux:
        next_logits_target = self.target_network(sample["next_obs"])
        if self.hparams.double_q:  # the online net picks a*, the target net evaluates it
            next_q_policy = self._q_values(self.q_network, sample["next_obs"])
        else:
            next_q_policy = categorical_q_values(next_logits_target, self.support)
        target_probs = categorical_target(
            sample["reward"], sample["discount"], next_logits_target, next_q_policy, self.support
        )
        logits = self.q_network(sample["obs"])
        loss, per_sample = self.loss_function(
            logits, sample["action"], target_probs, sample["weights"]
        )
        q_mean = tf.reduce_mean(categorical_q_values(logits, self.support))
        return loss, {"td_error": per_sample, "q_mean": q_mean}
