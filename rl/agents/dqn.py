"""DQN with the Rainbow switches that are pure configuration: double-Q, dueling, prioritized
replay, n-step returns, hard or Polyak target updates, NoisyNet heads.

Mnih et al. 2015, "Human-level control through deep reinforcement learning" (Nature 518);
van Hasselt et al. 2015, https://arxiv.org/abs/1509.06461 (double Q);
Wang et al. 2016, https://arxiv.org/abs/1511.06581 (dueling);
Schaul et al. 2015, https://arxiv.org/abs/1511.05952 (prioritized replay);
Hessel et al. 2017, https://arxiv.org/abs/1710.02298 (n-step, the combination);
Fortunato et al. 2017, https://arxiv.org/abs/1706.10295 (`noisy`).

With an env that masks its actions (docs/masking.md) acting picks among the legal actions only
(greedy and epsilon's random choice) and the targets maximize over the next state's legal ones.

`update` runs `gradient_steps` optimizer steps in ONE compiled call on K batches sampled up
front; prioritized replay's priorities are written back after it (at most K-1 steps stale).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rl.agents.action_functions import greedy
from rl.agents.function_slots import resolve_function
from rl.agents.gradient_functions import double_q_learning_target, q_learning_target
from rl.agents.q_learning import QLearning
from rl.agents.replay_agent import ReplayAgent, mean_over_batches
from rl.errors import UserError
from rl.hparams import as_schedule
from rl.models import QNetwork
from rl.models.action_mask import legal_actions, mask_illegal
from rl.registry import register_agent
from rl.types import LossAndAux


@register_agent("dqn")
class DQN(QLearning, ReplayAgent):
    """Deep Q-Network agent for discrete actions."""

    supports_strategies = True  # `loss` is a mean over its batch
    masks_actions = True

    # ---------------------------------------------------------------------- building
    def _build(self) -> None:
        hp, spec = self.hparams, self.spec
        if not spec.discrete:
            raise UserError(
                f"agent 'dqn' needs a discrete action space; env {spec.env_id!r} has Box "
                "actions (use a continuous-control agent)"
            )

        def q_network(name: str) -> QNetwork:
            net = QNetwork(
                spec.num_actions,
                hp.model,
                hp.hidden_sizes,
                hp.activation,
                hp.dueling,
                obs_layout=spec.obs_layout,
                name=name,
                **self._q_network_options(),
            )
            net(tf.zeros([1, *spec.obs_shape], spec.obs_dtype))  # create the variables now
            return net

        self.q_network = q_network("q_network")
        self.target_network = q_network("target_network")
        self._sync_target(tau=1.0)
        self.epsilon = as_schedule(hp.epsilon)
        self.action_function = resolve_function(self, "action_function")
        self.loss_function = resolve_function(self, "loss")

        self._declare_transitions((), np.int64, hp.n_step)

    def _q_network_options(self) -> dict:
        """Extra QNetwork arguments (C51 adds its atoms)."""
        return {"noisy": self.hparams.noisy, "sigma0": self.hparams.noisy_sigma0}

    # ------------------------------------------------------------------------ acting
    def _act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        legal = self._legal(obs)
        if not explore:  # noisy layers use their mean weights
            return greedy(self._masked(self._q_values(self.q_network, obs, noisy=False), legal))
        if self.hparams.noisy:  # NoisyNet: fresh noise for every acting step
            self.q_network.resample_noise(self.generator)
        q_values = self._masked(self._q_values(self.q_network, obs), legal)
        epsilon = self._current_epsilon()
        if legal is None:
            return self.action_function(q_values, self.generator, epsilon)
        return self.action_function(q_values, self.generator, epsilon, legal=legal)

    def _legal(self, obs: tf.Tensor) -> tf.Tensor | None:
        """[B, A] legal actions where the env masks them, else None."""
        return legal_actions(obs, self.spec.obs_layout) if self.spec.action_masked else None

    @staticmethod
    def _masked(q_values: tf.Tensor, legal: tf.Tensor | None) -> tf.Tensor:
        return q_values if legal is None else mask_illegal(q_values, legal)

    def _q_values(self, network: QNetwork, obs: tf.Tensor, noisy: bool = True) -> tf.Tensor:
        """[B, A] Q-values of `network` (C51: the means of its return distributions)."""
        return network(obs, noisy=noisy)

    # ---------------------------------------------------------------------- learning
    def _train_on_batches(self, batch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        return mean_over_batches(batch, self._train_step, self.loss_metrics)

    def _train_step(self, sample: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        hp = self.hparams
        self._sync_target_when_due()
        if hp.noisy:  # independent noise for the online and target nets (NoisyNet)
            self.q_network.resample_noise(self.generator)
            self.target_network.resample_noise(self.generator)
        loss, grad_norm, aux = self.learner.gradient_step(
            self.loss, self.q_network.trainable_variables, sample
        )
        return {"loss": loss, "grad_norm": grad_norm, **aux}

    def _td_errors(self, sample: dict[str, tf.Tensor]) -> tf.Tensor:
        return self.loss(sample)[1]["td_error"]

    def loss(self, sample: dict[str, tf.Tensor]) -> LossAndAux:
        next_legal = self._legal(sample["next_obs"])  # max over the next state's legal actions
        next_q_target = self._masked(self.target_network(sample["next_obs"]), next_legal)
        if self.hparams.double_q:
            next_q_online = self._masked(self.q_network(sample["next_obs"]), next_legal)
            td_target = double_q_learning_target(
                sample["reward"], sample["discount"], next_q_target, next_q_online
            )
        else:
            td_target = q_learning_target(sample["reward"], sample["discount"], next_q_target)
        q_values = self.q_network(sample["obs"])
        loss, td_error = self.loss_function(
            q_values, sample["action"], td_target, sample["weights"]
        )
        return loss, {"td_error": td_error, "q_mean": tf.reduce_mean(q_values)}

    # ----------------------------------------------------------------------- logging
