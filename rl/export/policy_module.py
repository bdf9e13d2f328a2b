"""The exported policy: a `tf.Module` whose serving signatures are the agent's acting math.

Only the policy's pure steps are traced (`greedy_policy_step`, `sampled_policy_step`), so the
graph holds exactly what the agent does to an observation before it acts (scaling, frozen
observation normalization, network, action post-processing), and the module keeps only the
variables those read: a SavedModel of it loads with TensorFlow alone. A Dict or Tuple
observation is taken as one input per key (`observation_specs`), packed inside the graph, so a
user feeds the env's observation as it comes (docs/export.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import tensorflow as tf

from rl.agents.base import Agent
from rl.envs.packed_observation import ObsLayout
from rl.envs.spec import EnvSpec
from rl.errors import UserError

GREEDY = "greedy_action"
SAMPLE = "sample_action"
INITIAL_STATE = "initial_state"


def observation_specs(spec: EnvSpec) -> list[tf.TensorSpec]:
    """The serving functions' observation inputs: one "observation" tensor, or, for Dict and Tuple
    observations, one input per key (named as `input_name` names it; float32, a Discrete key as
    its int64 value), packed inside the graph as `ObsLayout.pack` packs them."""
    if spec.obs_layout is None:
        return [tf.TensorSpec([None, *spec.obs_shape], tf.as_dtype(spec.obs_dtype), "observation")]
    return [
        tf.TensorSpec([None], tf.int64, input_name(part.key))
        if part.kind == "one_hot"
        else tf.TensorSpec([None, *part.shape], tf.float32, input_name(part.key))
        for part in spec.obs_layout.parts
    ]


def input_name(key: str) -> str:
    """A layout key as a signature input name: `outer/inner` -> `outer__inner`, `0` -> `key_0`."""
    name = re.sub(r"\W", "_", key.replace("/", "__"))
    return name if name[:1].isalpha() else f"key_{name}"


def packed(layout: ObsLayout | None, observation: Sequence[tf.Tensor]) -> tf.Tensor:
    """The packed [B, size] float32 observation the agent reads, from the inputs of
    `observation_specs` (the one "observation" tensor where there is no layout)."""
    if layout is None:
        (obs,) = observation
        return obs
    pieces = [
        tf.reshape(tf.cast(value, tf.float32) - part.start, [-1, 1])
        if part.kind == "one_hot"
        else tf.reshape(tf.cast(value, tf.float32), [-1, part.size])
        for part, value in zip(layout.parts, observation, strict=True)
    ]
    return tf.concat(pieces, axis=-1)


class ExportedPolicy(tf.Module):
    """Serving functions of `agent` (any batch size) plus `metadata()` (a JSON string)."""

    def __init__(self, agent: Agent, metadata: dict[str, Any]) -> None:
        super().__init__(name="exported_policy")
        spec = agent.spec
        self.recurrent = agent.policy_state_size > 0
        self.stochastic = agent.stochastic_policy
        obs = observation_specs(spec)
        taken = sorted({o.name for o in obs} & {"state", "seed"})
        if taken:
            raise UserError(
                f"env {spec.env_id!r} has an observation key named {taken[0]!r}, which the "
                "exported functions take as their own input; rename the key in a wrapper"
            )
        if self.recurrent:
            self._add_recurrent_functions(agent, obs)
        else:
            self._add_feed_forward_functions(agent, obs)
        metadata_text = json.dumps(metadata, sort_keys=True)
        self.metadata = tf.function(lambda: tf.constant(metadata_text), input_signature=[])
        # The variables the traced steps read (Keras 3 layers are no tf.Modules, so the agent's
        # `variables` misses them): tracked here, they are saved and nothing else of the agent.
        captured = {id(v): v for function in self.signatures().values() for v in function.variables}
        self.policy_variables = list(captured.values())

    def _add_recurrent_functions(self, agent: Agent, obs: list[tf.TensorSpec]) -> None:
        """greedy_action and sample_action take and return the policy's state; initial_state
        makes a batch's first one."""
        n, layout, state_size = len(obs), agent.spec.obs_layout, agent.policy_state_size
        state = tf.TensorSpec([None, state_size], tf.float32, "state")
        seed = tf.TensorSpec([], tf.int64, "seed")

        def greedy(*inputs):
            action, next_state = agent.greedy_policy_step(packed(layout, inputs[:n]), inputs[n])
            return {"action": action, "state": next_state}

        def sample(*inputs):
            observation, (state, seed) = packed(layout, inputs[:n]), inputs[n:]
            action, next_state = agent.sampled_policy_step(observation, state, seed)
            return {"action": action, "state": next_state}

        def initial(batch_size):
            return {"state": tf.zeros([batch_size, state_size], tf.float32)}

        self.greedy_action = tf.function(greedy, input_signature=[*obs, state])
        if self.stochastic:
            self.sample_action = tf.function(sample, input_signature=[*obs, state, seed])
        self.initial_state = tf.function(
            initial, input_signature=[tf.TensorSpec([], tf.int32, "batch_size")]
        )

    def _add_feed_forward_functions(self, agent: Agent, obs: list[tf.TensorSpec]) -> None:
        """greedy_action and sample_action of observations alone (the policy steps are given an
        empty state)."""
        n, layout = len(obs), agent.spec.obs_layout
        seed = tf.TensorSpec([], tf.int64, "seed")

        def no_state(observation):
            return tf.zeros([tf.shape(observation)[0], 0], tf.float32)

        def greedy(*inputs):
            observation = packed(layout, inputs)
            return {"action": agent.greedy_policy_step(observation, no_state(observation))[0]}

        def sample(*inputs):
            observation, seed = packed(layout, inputs[:n]), inputs[n]
            step = agent.sampled_policy_step(observation, no_state(observation), seed)
            return {"action": step[0]}

        self.greedy_action = tf.function(greedy, input_signature=obs)
        if self.stochastic:
            self.sample_action = tf.function(sample, input_signature=[*obs, seed])

    def signatures(self) -> dict[str, Any]:
        """The serving signatures (TF Serving, `loaded.signatures[...]`)."""
        out = {GREEDY: self.greedy_action.get_concrete_function()}
        if self.stochastic:
            out[SAMPLE] = self.sample_action.get_concrete_function()
        if self.recurrent:
            out[INITIAL_STATE] = self.initial_state.get_concrete_function()
        return out
