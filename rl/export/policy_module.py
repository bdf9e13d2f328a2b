"""The exported policy: a `tf.Module` whose serving signatures are the agent's acting math.

Only the policy's pure steps are traced (`greedy_policy_step`, `sampled_policy_step`), so the
graph holds exactly what the agent does to an observation before it acts (scaling, frozen
observation normalization, network, action post-processing), and the module keeps only the
variables those read: a SavedModel of it loads with TensorFlow alone.
"""

from __future__ import annotations

import json
from typing import Any

import tensorflow as tf

from rl.agents.base import Agent

GREEDY = "greedy_action"
SAMPLE = "sample_action"
INITIAL_STATE = "initial_state"


class ExportedPolicy(tf.Module):
    """Serving functions of `agent` (any batch size) plus `metadata()` (a JSON string)."""

    def __init__(self, agent: Agent, metadata: dict[str, Any]) -> None:
        super().__init__(name="exported_policy")
        spec = agent.spec
        self.recurrent = agent.policy_state_size > 0
        self.stochastic = agent.stochastic_policy
        state_size = agent.policy_state_size
        obs = tf.TensorSpec([None, *spec.obs_shape], tf.as_dtype(spec.obs_dtype), "observation")
        state = tf.TensorSpec([None, state_size], tf.float32, "state")
        seed = tf.TensorSpec([], tf.int64, "seed")

        if self.recurrent:

            def greedy(observation, state):
                action, next_state = agent.greedy_policy_step(observation, state)
                return {"action": action, "state": next_state}

            def sample(observation, state, seed):
                action, next_state = agent.sampled_policy_step(observation, state, seed)
                return {"action": action, "state": next_state}

            def initial(batch_size):
                return {"state": tf.zeros([batch_size, state_size], tf.float32)}

            self.greedy_action = tf.function(greedy, input_signature=[obs, state])
            if self.stochastic:
                self.sample_action = tf.function(sample, input_signature=[obs, state, seed])
            self.initial_state = tf.function(
                initial, input_signature=[tf.TensorSpec([], tf.int32, "batch_size")]
            )
        else:

            def no_state(observation):
                return tf.zeros([tf.shape(observation)[0], 0], tf.float32)

            def greedy(observation):
                return {"action": agent.greedy_policy_step(observation, no_state(observation))[0]}

            def sample(observation, seed):
                step = agent.sampled_policy_step(observation, no_state(observation), seed)
                return {"action": step[0]}

            self.greedy_action = tf.function(greedy, input_signature=[obs])
            if self.stochastic:
                self.sample_action = tf.function(sample, input_signature=[obs, seed])
        metadata_text = json.dumps(metadata, sort_keys=True)
        self.metadata = tf.function(lambda: tf.constant(metadata_text), input_signature=[])
        # The variables the traced steps read (Keras 3 layers are no tf.Modules, so the agent's
        # `variables` misses them): tracked here, they are saved and nothing else of the agent.
        captured = {id(v): v for function in self.signatures().values() for v in function.variables}
        self.policy_variables = list(captured.values())

    def signatures(self) -> dict[str, Any]:
        """The serving signatures (TF Serving, `loaded.signatures[...]`)."""
        out = {GREEDY: self.greedy_action.get_concrete_function()}
        if self.stochastic:
            out[SAMPLE] = self.sample_action.get_concrete_function()
        if self.recurrent:
            out[INITIAL_STATE] = self.initial_state.get_concrete_function()
        return out
