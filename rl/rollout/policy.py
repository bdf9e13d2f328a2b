"""Acting with an actor-critic model: sampled or greedy actions, and the behaviour's log-prob.

Sampling uses only the agent's generator (Gumbel-max for categorical actions), so runs are
reproducible and the generator's state can be checkpointed. `ActorCriticPolicy` makes a bare
`ActorCritic` plus a generator a policy `Collector` can step an env with.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rl.registry import register_action_function
from rl.rollout.reevaluate import ActorCriticModel
from rl.types import LossAndAux


@register_action_function("sample", role="logits_sample")
def sample(logits: tf.Tensor, generator: tf.random.Generator) -> tf.Tensor:
    """One action per row from softmax(`logits`) by the Gumbel-max trick: exact, and needs only the
    agent's generator (tf.random.categorical would use global op seeds)."""
    uniform = generator.uniform(tf.shape(logits), minval=1e-20, maxval=1.0)
    gumbel = -tf.math.log(-tf.math.log(uniform))
    return tf.argmax(logits + gumbel, axis=-1, output_type=tf.int64)


def sample_action(
    model: ActorCriticModel, params: tf.Tensor, generator: tf.random.Generator
) -> tf.Tensor:
    """A sample of pi(.|s) for policy parameters `params` [B, P] (model.policy(obs))."""
    if model.discrete:
        return sample(params, generator)  # Gumbel-max with the generator
    # The unclipped Gaussian sample goes to the env, so the stored action is the one whose
    # log-prob the learner uses (envs such as Pendulum clip to their bounds themselves).
    noise = generator.normal(tf.shape(params))
    return model.unflatten_action(params + tf.exp(model.log_std) * noise)


def greedy_action(
    model: ActorCriticModel,
    params: tf.Tensor,
    low: np.ndarray | None = None,
    high: np.ndarray | None = None,
) -> tf.Tensor:
    """The mode of pi(.|s): argmax of the logits, or the Gaussian mean clipped to [low, high]."""
    if model.discrete:
        return tf.argmax(params, axis=-1, output_type=tf.int64)
    mean = model.unflatten_action(params)
    if low is None or high is None:
        return mean
    return tf.clip_by_value(mean, tf.constant(low, tf.float32), tf.constant(high, tf.float32))


def action_log_prob(model: ActorCriticModel, params: tf.Tensor, action: tf.Tensor) -> tf.Tensor:
    """log pi(action|s) [B] for `params` [B, P]: the behaviour log-prob stored with a step."""
    return model.distribution(params).log_prob(model.flatten_action(action))


class ActorCriticPolicy(tf.Module):
    """A bare actor-critic model as a policy: `act_with_info(obs)` samples actions and returns
    {"log_prob": log pi(a|s), "value": V(s)} with them, `act(obs, explore=False)` the mode."""

    def __init__(
        self,
        model: ActorCriticModel,
        generator: tf.random.Generator,
        action_low: np.ndarray | None = None,
        action_high: np.ndarray | None = None,
    ) -> None:
        super().__init__(name="actor_critic_policy")
        self.model = model
        self.generator = generator
        self.action_low, self.action_high = action_low, action_high

    def act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        params = self.model.policy(obs)
        if explore:
            return sample_action(self.model, params, self.generator)
        return greedy_action(self.model, params, self.action_low, self.action_high)

    def act_with_info(self, obs: tf.Tensor) -> LossAndAux:
        params, value = self.model(obs)
        action = sample_action(self.model, params, self.generator)
        return action, {"log_prob": action_log_prob(self.model, params, action), "value": value}
