"""Shared machinery of the off-policy continuous-control agents (DDPG/TD3, SAC, MADDPG): replay,
random warm-up actions, K gradient steps per compiled call, critics with Polyak targets.

The base optimizer trains the critics; the actor (and SAC's temperature) have their own on the
same `lr` schedule (`Learner.uncounted_step`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import tensorflow as tf

from rl.agents.gradient_functions import critic_loss
from rl.agents.replay_agent import ReplayAgent, mean_over_batches
from rl.errors import UserError
from rl.models import Critics
from rl.models.multi_input import refuse_keys_with_encoders
from rl.models.running_normalizer import ObservationNormalizer
from rl.models.torch_init import torch_init
from rl.types import Batch, LossAndAux


def polyak_update(targets: list[tf.Variable], sources: list[tf.Variable], tau: float) -> None:
    """target <- tau * source + (1 - tau) * target, variable by variable."""
    for target, source in zip(targets, sources, strict=True):
        target.assign(tau * source + (1.0 - tau) * target)


class OffPolicyContinuousAgent(ReplayAgent):
    """Base of TD3/DDPG, SAC and MADDPG: subclasses fill the hooks below and `loss_metrics`."""

    loss_metrics: tuple[str, ...] = ("loss", "q_mean")

    # ---------------------------------------------------------------------- building
    def _build(self) -> None:
        hp, spec = self.hparams, self.spec
        if spec.discrete:
            raise UserError(
                f"agent {hp.agent!r} needs a Box (continuous) action space; env "
                f"{spec.env_id!r} has {spec.num_actions} discrete actions (use dqn or ppo)"
            )
        self.action_low = tf.constant(spec.action_low, tf.float32)
        self.action_high = tf.constant(spec.action_high, tf.float32)
        self.obs_normalizer = None  # MADDPG has no normalize_obs key
        if "normalize_obs" in hp and hp.normalize_obs:
            refuse_keys_with_encoders(spec.obs_layout, "normalize_obs", "set normalize_obs=False")
            self.obs_normalizer = ObservationNormalizer(spec.obs_shape, name="obs_normalizer")
        self._build_networks()
        self._declare_transitions(tuple(spec.action_shape), np.float32, n_step=1)

    def _build_critics(self, num_critics: int) -> None:
        """`critics` and their copy `critics_target`, built after the actors (same init draws);
        with `torch_init`, the actor and critics are then drawn as PyTorch's defaults."""
        hp, spec = self.hparams, self.spec
        obs = tf.zeros([1, *spec.obs_shape], spec.obs_dtype)
        action = tf.zeros([1, *spec.action_shape], tf.float32)
        for name in ("critics", "critics_target"):
            critics = Critics(
                hp.model, hp.hidden_sizes, hp.activation, num_critics, spec.obs_layout,
                self.obs_normalizer, name=name,
            )  # fmt: skip
            critics(obs, action)
            setattr(self, name, critics)
        if "torch_init" in hp and hp.torch_init:  # SAC, TD3/DDPG (MADDPG has no such key)
            torch_init(self.actor, self.critics)
        polyak_update(self.critics_target.variables, self.critics.variables, 1.0)

    def _observe(self, transition: Batch) -> None:
        """The observations acted on update the running statistics (VecNormalize's order:
        every training observation once, the next ones normalized with them)."""
        if self.obs_normalizer is not None:
            self.obs_normalizer.update(transition["obs"])
        super()._observe(transition)

    def _trainable_variables(self) -> list[tf.Variable]:
        return self.critics.trainable_variables

    def _critic_step(
        self,
        sample: dict[str, tf.Tensor],
        td_target: tf.Tensor,
        loss_function: Callable = critic_loss,
    ) -> LossAndAux:
        """One gradient step of the critics towards `td_target` (examples on axis 0), as a
        batch-wise loss a strategy can split: (loss, {"td_error": [C, B], "q_mean"})."""
        critic_batch = {
            "obs": sample["obs"],
            "action": sample["action"],
            "td_target": td_target,
            "weights": sample["weights"],
        }

        def loss_fn(part):
            q_values = self.critics(part["obs"], part["action"])
            loss, td_error = loss_function(q_values, part["td_target"], part["weights"])
            # td_error [C, B] goes out as [B, C]: per-example outputs have examples on axis 0
            return loss, {"td_error": tf.transpose(td_error), "q_mean": tf.reduce_mean(q_values)}

        loss, _, aux = self.learner.gradient_step(
            loss_fn, self.critics.trainable_variables, critic_batch
        )
        aux["td_error"] = tf.transpose(aux["td_error"])
        return loss, aux

    # ------------------------------------------------------------------------ acting
    def _act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        if not explore:
            return self._policy_action(obs)
        action = self._explore_action(obs)
        # Uniformly random actions in the bounds until learning starts (as SB3 does).
        uniform = self.generator.uniform(tf.shape(action))
        random_action = self.action_low + uniform * (self.action_high - self.action_low)
        return tf.where(self.env_steps < self.hparams.learning_starts, random_action, action)

    # ---------------------------------------------------------------------- learning
    def _train_on_batches(self, batch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        def train_step(sample: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
            out = self._train_step(sample)  # TD errors: mean |.| over the critics
            return {**out, "td_error": tf.reduce_mean(tf.abs(out["td_error"]), axis=0)}

        return mean_over_batches(batch, train_step, self.loss_metrics)

    # ------------------------------------------------------------------------- hooks
    def _build_networks(self) -> None:
        raise NotImplementedError

    def _policy_action(self, obs: tf.Tensor) -> tf.Tensor:
        raise NotImplementedError

    def _explore_action(self, obs: tf.Tensor) -> tf.Tensor:
        raise NotImplementedError

    def _train_step(self, sample: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        raise NotImplementedError
