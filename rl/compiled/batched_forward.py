"""Forward passes of S seeds' networks at once, as batched matmuls over the seed stack.

Why: in the multi-seed program the minibatch forward/backward pass is most of the work; per
seed it is S small matmuls per layer, here ONE `einsum("sbi,sio->sbo")` per Dense layer. Only
MLP torsos under the actor-critic heads (every network the TF-ops envs get); `for_agents`
returns None for anything else, and the caller runs each seed's model on its slice instead. It
mirrors `ActorCritic.call`, so `for_agents` checks it against that on a probe batch and uses it
only if every seed's outputs agree.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from rl.agents.base import Agent
from rl.compiled.stacked_variables import SeedStack


class Unsupported(Exception):
    """A layer the batched pass does not know; the caller falls back to per-seed passes."""


class StackedForward:
    """Batched passes of the template agent's network with weights taken from the stack."""

    def __init__(self, template: Agent, stack: SeedStack) -> None:
        self.template = template
        self.num_seeds = stack.num_seeds
        # Template variable -> its index in the stack (the same for every seed's agent).
        self._index = {id(v): i for i, v in enumerate(stack.per_seed[0])}

    @classmethod
    def for_agents(cls, agents: Sequence[Agent], stack: SeedStack) -> StackedForward | None:
        """The batched pass, or None where it does not apply or differs from the agents' models."""
        forward = cls(agents[0], stack)
        spec = agents[0].spec
        probe = np.random.default_rng(0).uniform(-1, 1, [len(agents), 7, *spec.obs_shape])
        probe = tf.constant(probe, tf.as_dtype(spec.obs_dtype))
        stacked = [v.read_value() for v in stack.stacked]
        try:
            params, values = forward.actor_critic(stacked, probe)
            alone = forward.policy(stacked, probe), forward.value(stacked, probe)
        except (Unsupported, AttributeError):
            return None
        for s, agent in enumerate(agents):
            own_params, own_values = agent.model(probe[s])
            own_value_alone = agent.model.value(probe[s])
            pairs = [(params[s], own_params), (values[s], own_values)]
            pairs += [(alone[0][s], own_params), (alone[1][s], own_value_alone)]
            if not all(np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in pairs):
                return None
        return forward

    # ------------------------------------------------------------------------ networks
    def actor_critic(
        self, stacked: Sequence[tf.Tensor], obs: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """`ActorCritic.call` for [S, B, *obs_shape] -> (params [S, B, P], values [S, B])."""
        model = self.template.model
        obs = tf.cast(obs, tf.float32)
        features = self.layer(model.torso, obs, stacked)
        value_features = (
            features if model.value_torso is None else self.layer(model.value_torso, obs, stacked)
        )
        params = self.layer(model.policy_head, features, stacked)
        values = tf.squeeze(self.layer(model.value_head, value_features, stacked), -1)
        return params, values

    def policy(self, stacked: Sequence[tf.Tensor], obs: tf.Tensor) -> tf.Tensor:
        """The policy head's parameters alone [S, B, P] (acting needs no value)."""
        model = self.template.model
        features = self.layer(model.torso, tf.cast(obs, tf.float32), stacked)
        return self.layer(model.policy_head, features, stacked)

    def value(self, stacked: Sequence[tf.Tensor], obs: tf.Tensor) -> tf.Tensor:
        """`ActorCritic.value`: [S, B, *obs_shape] -> [S, B]."""
        model = self.template.model
        torso = model.torso if model.value_torso is None else model.value_torso
        features = self.layer(torso, tf.cast(obs, tf.float32), stacked)
        return tf.squeeze(self.layer(model.value_head, features, stacked), -1)

    def layer(self, layer, x: tf.Tensor, stacked: Sequence[tf.Tensor]) -> tf.Tensor:
        """One layer (or a container of layers) of the template, for all seeds."""
        if isinstance(layer, tf.keras.layers.Dense):
            y = tf.einsum("sbi,sio->sbo", x, self._weight(layer.kernel, stacked))
            if layer.use_bias:
                y = y + self._weight(layer.bias, stacked)[:, None, :]
            return layer.activation(y)
        if isinstance(layer, tf.keras.layers.Flatten):
            return tf.reshape(x, [self.num_seeds, tf.shape(x)[1], -1])
        if isinstance(layer, tf.keras.Sequential):
            for inner in layer.layers:
                x = self.layer(inner, x, stacked)
            return x
        body = getattr(layer, "body", None)  # the "auto" torso wraps the chosen torso
        if body is not None:
            return self.layer(body, x, stacked)
        raise Unsupported(type(layer).__name__)

    def _weight(self, variable, stacked: Sequence[tf.Tensor]) -> tf.Tensor:
        index = self._index.get(id(variable))
        if index is None:  # not trained, so not stacked: per-seed values would differ
            raise Unsupported(variable.name)
        return stacked[index]
