"""S agents' `tf.random.Generator` states as one [S, 3] variable that draws for every seed at once.

Why: in the many-seeds program each seed's own generator put its own draw ops into the graph
(acting, minibatch permutations), so the trace and XLA compile grew with S. Here a draw is the
same few ops for any S, and seed s gets exactly what `agents[s].generator` would draw: Philox
with its key and counter, the counter then advanced as the generator's `RngReadAndSkip`
advances it (256 per number drawn, a 128-bit add; tests/compiled/test_stacked_generators.py
checks it). The agents' generators stay the checkpoint view (`store_to_agents` /
`load_from_agents`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from rl.agents.base import Agent
from rl.compiled.stacked_variables import NotStackable, per_seed_map

PHILOX = 1  # tf.random.Algorithm.PHILOX
SKIP_PER_NUMBER = 256  # how far RngReadAndSkip moves a Philox counter per number drawn


class StackedGenerators(tf.Module):
    """`uniform` draws of S generators, their states stacked."""

    def __init__(self, agents: Sequence[Agent]) -> None:
        super().__init__(name="stacked_generators")
        self.agents = list(agents)
        if any(agent.generator.algorithm != PHILOX for agent in self.agents):
            raise NotStackable("only Philox generators can be stacked")
        self.state = tf.Variable(tf.stack([a.generator.state for a in self.agents]), name="rng")

    def uniform(self, shape: Sequence[int], minval: float = 0.0, maxval: float = 1.0) -> tf.Tensor:
        """[S, *shape[1:]] float32: row s is `agents[s].generator.uniform(shape[1:], ...)`
        (`shape` static, maybe a traced `tf.shape`)."""
        state = tf.bitcast(self.state.read_value(), tf.uint64)  # [S, 3]: counter (2), key
        counter, key = state[:, :2], state[:, 2:]
        draw = [int(n) for n in tf.get_static_value(tf.convert_to_tensor(shape))[1:]]
        rows = per_seed_map(
            lambda kc: tf.raw_ops.StatelessRandomUniformV2(
                shape=draw, key=kc[0], counter=kc[1], alg=PHILOX
            ),
            (key, counter),
            len(self.agents),
        )
        low = counter[:, 0] + np.uint64(SKIP_PER_NUMBER * np.prod(draw, dtype=np.uint64))
        high = counter[:, 1] + tf.cast(low < counter[:, 0], tf.uint64)  # the carry
        self.state.assign(tf.bitcast(tf.stack([low, high, key[:, 0]], axis=1), tf.int64))
        minval, maxval = tf.constant(minval), tf.constant(maxval)
        return rows * (maxval - minval) + minval

    def store_to_agents(self) -> None:
        for agent, state in zip(self.agents, tf.unstack(self.state), strict=True):
            agent.generator.state.assign(state)

    def load_from_agents(self) -> None:
        self.state.assign(tf.stack([agent.generator.state for agent in self.agents]))
