"""QR-DQN: DQN that learns N quantiles of each action's return distribution.

Dabney, Rowland, Bellemare & Munos 2017, "Distributional Reinforcement Learning with Quantile
Regression", https://arxiv.org/abs/1710.10044.

The same three DQN hooks change as C51's: [B, A, N] quantiles, Q(s, a) their mean, and the
quantile loss (its per-sample value is the priority). The paper picks a* with the target
network's mean Q (`double_q=False`, what the qrdqn sets choose).
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.dqn import DQN
from rl.agents.function_slots import FunctionSlot
from rl.agents.gradient_functions import quantile_q_values, quantile_target
from rl.errors import UserError
from rl.hparams import as_schedule
from rl.models import QNetwork
from rl.registry import gradient_functions, register_agent
from rl.types import LossAndAux


@register_agent("qrdqn")
class QRDQN(DQN):
    """Quantile-regression distributional DQN."""

    masks_actions = False  # the distributional targets are not masked yet

    # `loss` regresses quantiles: neither a TD loss on scalar Q-values nor C51's fits here.
    function_slots = {
        **DQN.function_slots,
        "loss": FunctionSlot(gradient_functions, ("quantile_loss",)),
    }

    def _build(self) -> None:
        hp = self.hparams
        if hp.num_quantiles < 2:
            raise UserError(f"num_quantiles must be >= 2 for qrdqn, got {hp.num_quantiles}")
        kappa = as_schedule(hp.kappa)
        if not kappa.value_range()[0] > 0:
            shown = kappa.args["value"] if kappa.name == "constant" else kappa.spec()
            raise UserError(
                f"kappa must be > 0 for qrdqn (the Huber threshold) at every step, got {shown}"
            )
        super()._build()

    def _q_network_options(self) -> dict:
        return {**super()._q_network_options(), "num_atoms": self.hparams.num_quantiles}

    def _q_values(self, network: QNetwork, obs: tf.Tensor, noisy: bool = True) -> tf.Tensor:
        return quantile_q_values(network(obs, noisy=noisy))

    def loss(self, sample: dict[str, tf.Tensor]) -> LossAndAux:
        next_quantiles_target = self.target_network(sample["next_obs"])
        if self.hparams.double_q:  # the online net picks a*, the target net evaluates it
            next_q_policy = self._q_values(self.q_network, sample["next_obs"])
        else:  # the paper: a* = argmax of the target net's own mean
            next_q_policy = quantile_q_values(next_quantiles_target)
        target = quantile_target(
            sample["reward"], sample["discount"], next_quantiles_target, next_q_policy
        )
        quantiles = self.q_network(sample["obs"])
        # An Ape-X actor (no learner) reads a `kappa` schedule at its start for its priorities.
        step = self.learner.gradient_steps if self.learner is not None else tf.constant(0, tf.int64)
        loss, per_sample = self.loss_function(
            quantiles,
            sample["action"],
            target,
            sample["weights"],
            self.hparam_values.now("kappa", step),
        )
        q_mean = tf.reduce_mean(quantile_q_values(quantiles))
        return loss, {"td_error": per_sample, "q_mean": q_mean}
