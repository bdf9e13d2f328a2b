"""Batched action functions driven by the agent's generator."""

import numpy as np
import tensorflow as tf

from rl.agents.action_functions import epsilon_greedy, greedy, sample


def test_greedy_is_argmax():
    q = tf.constant([[1.0, 3.0, 2.0], [5.0, 0.0, 1.0]])
    np.testing.assert_array_equal(greedy(q).numpy(), [1, 0])


def test_epsilon_greedy_rates_and_reproducibility():
    q = tf.tile(tf.constant([[0.0, 1.0, 0.0, 0.0]]), [20000, 1])
    actions = epsilon_greedy(q, tf.random.Generator.from_seed(1), 0.2).numpy()
    # Greedy action 1 is taken with prob 0.8 + 0.2/4 = 0.85; each other with 0.05.
    freq = np.bincount(actions, minlength=4) / len(actions)
    np.testing.assert_allclose(freq, [0.05, 0.85, 0.05, 0.05], atol=0.01)
    again = epsilon_greedy(q, tf.random.Generator.from_seed(1), 0.2).numpy()
    np.testing.assert_array_equal(actions, again)
    assert (epsilon_greedy(q, tf.random.Generator.from_seed(1), 0.0).numpy() == 1).all()


def test_per_row_epsilon():
    q = tf.tile(tf.constant([[0.0, 1.0]]), [4000, 1])
    eps = tf.concat([tf.zeros([2000]), tf.ones([2000])], 0)
    actions = epsilon_greedy(q, tf.random.Generator.from_seed(2), eps).numpy()
    assert (actions[:2000] == 1).all()
    assert abs(actions[2000:].mean() - 0.5) < 0.05


def test_sample_follows_softmax():
    logits = tf.math.log(tf.tile(tf.constant([[0.1, 0.6, 0.3]]), [30000, 1]))
    actions = sample(logits, tf.random.Generator.from_seed(3)).numpy()
    np.testing.assert_allclose(
        np.bincount(actions, minlength=3) / 30000, [0.1, 0.6, 0.3], atol=0.01
    )
