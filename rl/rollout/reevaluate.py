"""Re-evaluating a stored rollout under a (possibly different) policy, in one batched pass.

PPO needs log pi of stored steps for its ratio, off-policy actor-critics the weight pi/mu, every
critic its value targets; one forward pass over the flattened T * N steps keeps those numbers
identical across algorithms and cheap. The model is anything with `rl.models.ActorCritic`'s
interface.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

import tensorflow as tf

from rl.rollout.rollout import Rollout, flatten_steps


class ActorCriticModel(Protocol):
    """What the rollout API needs of a model (rl.models.ActorCritic has it)."""

    discrete: bool
    log_std: Any  # Box actions: the Gaussian's log std (None for discrete actions)

    def __call__(self, obs: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]: ...

    def distribution(self, policy_params: tf.Tensor) -> Any: ...

    def flatten_action(self, action: tf.Tensor) -> tf.Tensor: ...

    def value(self, obs: tf.Tensor) -> tf.Tensor: ...

    def policy(self, obs: tf.Tensor) -> tf.Tensor: ...

    def unflatten_action(self, action: tf.Tensor) -> tf.Tensor: ...


class PolicyOutputs(NamedTuple):
    """A rollout's steps under one policy, each [T, N] (`params` [T, N, P])."""

    log_prob: tf.Tensor  # log pi(a_t | s_t)
    value: tf.Tensor  # V(s_t)
    entropy: tf.Tensor  # H(pi(. | s_t))
    params: tf.Tensor  # policy parameters: logits, or Gaussian means


def reevaluate(rollout: Rollout, model: ActorCriticModel) -> PolicyOutputs:
    """log-probs of the stored actions, values and entropies under `model`'s current weights; after
    an update, `log_prob - rollout.log_prob` is the log importance ratio log pi/mu."""
    num_steps, num_envs = rollout.num_steps, rollout.num_envs
    flat = reevaluate_steps(model, flatten_steps(rollout.obs), flatten_steps(rollout.action))

    def time_major(x: tf.Tensor) -> tf.Tensor:
        return tf.reshape(x, [num_steps, num_envs, *x.shape[1:]])

    return PolicyOutputs(*(time_major(x) for x in flat))


def reevaluate_steps(model: ActorCriticModel, obs: Any, action: Any) -> PolicyOutputs:
    """`reevaluate` for flat samples (obs [B, ...], action [B, ...], e.g. a minibatch of
    `Rollout.flatten()`): every output is [B] (`params` [B, P])."""
    params, value = model(tf.convert_to_tensor(obs))
    distribution = model.distribution(params)
    log_prob = distribution.log_prob(model.flatten_action(tf.convert_to_tensor(action)))
    return PolicyOutputs(log_prob, value, distribution.entropy(), params)


def bootstrap_values(rollout: Rollout, model: ActorCriticModel) -> tuple[tf.Tensor, tf.Tensor]:
    """(V(final_obs) [T, N], 0 where the step was not truncated; V(last_next_obs) [N]): what
    returns and advantage estimators bootstrap from at truncations and at the rollout's end."""
    num_steps, num_envs = rollout.num_steps, rollout.num_envs
    final_values = tf.reshape(model.value(flatten_steps(rollout.final_obs)), [num_steps, num_envs])
    final_values = tf.where(
        tf.cast(rollout.truncated, tf.bool), final_values, tf.zeros_like(final_values)
    )
    return final_values, model.value(tf.convert_to_tensor(rollout.last_next_obs))
