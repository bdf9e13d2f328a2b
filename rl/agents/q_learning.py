"""What DQN and DRQN share as Q-learners: their function slots, the online network's variables
as the learner's, the target network's update, and epsilon-greedy exploration that acts
uniformly at random until learning starts (as SB3 and Dopamine do).

A mixin listed before `Agent` (or `ReplayAgent`) in the bases: the agent's `_build` creates
`self.q_network`, `self.target_network` (same variables, same order) and `self.epsilon`, a
schedule of env steps. It adds behaviour only, no variables, so checkpoints are unchanged.
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.function_slots import FunctionSlot
from rl.agents.off_policy_continuous import polyak_update
from rl.registry import action_functions, gradient_functions
from rl.types import Metrics


class QLearning:
    """An online Q-network, its target copy and epsilon-greedy exploration."""

    function_slots = {
        "action_function": FunctionSlot(action_functions, ("q_exploration",)),
        "loss": FunctionSlot(gradient_functions, ("td_loss",)),
    }

    def _trainable_variables(self) -> list[tf.Variable]:
        return self.q_network.trainable_variables

    def _sync_target(self, tau: float | tf.Tensor) -> None:
        polyak_update(self.target_network.variables, self.q_network.variables, tau)

    def _sync_target_when_due(self) -> None:
        """Inside the learner (TF code): the target moves by `tau` every `target_update_period`
        gradient steps, counted before this step. A `tf.cond`: the learner is traced without
        autograph, whose conversion would cost seconds per process."""

        def sync() -> tf.Tensor:
            self._sync_target(self.hparam_values.at("tau", self.learner.gradient_steps))
            return tf.constant(True)  # a branch must return a tensor

        due = tf.equal(self.learner.gradient_steps % self.hparams.target_update_period, 0)
        tf.cond(due, sync, lambda: tf.constant(False))

    def _current_epsilon(self) -> tf.Tensor:
        return tf.where(
            self.env_steps < self.hparams.learning_starts, 1.0, self.epsilon(self.env_steps)
        )

    def _metrics(self, env_steps: tf.Variable) -> Metrics:
        return {"train/epsilon": float(self._current_epsilon())}
