"""`StackedGenerators` draws for S seeds what each seed's own `tf.random.Generator` would, bit for
bit, and leaves each state where the generator's would be: the counter moved by
`SKIP_PER_NUMBER` per number (TF's `RngReadAndSkip`), the carry into its high word included."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rl.compiled.stacked_generators import StackedGenerators


class _Agent:
    def __init__(self, seed: int) -> None:
        self.generator = tf.random.Generator.from_seed(seed)


def test_stacked_draws_and_states_equal_each_generators_own():
    agents = [_Agent(3), _Agent(4), _Agent(5)]
    agents[2].generator.state.assign([-5, 7, 99])  # counter 2**64 - 5: the next draw carries
    stacked = StackedGenerators(agents)

    @tf.function(jit_compile=True)  # as in the population program
    def draw_stacked():
        return stacked.uniform([3, 4, 5], 1e-20, 1.0), stacked.uniform([3, 64])

    @tf.function(jit_compile=True)
    def draw_own(generator):
        return generator.uniform([4, 5], 1e-20, 1.0), generator.uniform([64])

    for _ in range(2):
        small, large = draw_stacked()
        for s, agent in enumerate(agents):
            own_small, own_large = draw_own(agent.generator)
            np.testing.assert_array_equal(small[s], own_small)
            np.testing.assert_array_equal(large[s], own_large)
            np.testing.assert_array_equal(stacked.state[s], agent.generator.state)
    assert agents[2].generator.state.numpy()[1] == 8  # the carry happened
    assert not np.array_equal(small[0], small[1])  # seeds draw apart


def test_store_and_load_move_the_states():
    agents = [_Agent(3), _Agent(4)]
    stacked = StackedGenerators(agents)
    tf.function(lambda: stacked.uniform([2, 10]))()  # traced code, as in the program
    stacked.store_to_agents()
    np.testing.assert_array_equal(agents[1].generator.state, stacked.state[1])
    agents[0].generator.uniform([7])
    stacked.load_from_agents()
    np.testing.assert_array_equal(stacked.state[0], agents[0].generator.state)
