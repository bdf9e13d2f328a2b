"""`max_grad_norm` clipping with a number, None, or a schedule's tensor, by hand: gradients
(3, 4) have global norm 5."""

import numpy as np
import pytest
import tensorflow as tf

from rl.utils.gradient_clipping import clip_by_global_norm, clip_factor

GRADS = [tf.constant([3.0]), tf.constant([4.0])]
NORM = tf.linalg.global_norm(GRADS)


def values(grads):
    return [float(g.numpy()[0]) for g in grads]


@pytest.mark.parametrize("limit", [None, 0.0, -1.0, tf.constant(0.0), tf.constant(-2.0)])
def test_no_clipping_leaves_the_gradients_as_they_are(limit):
    assert values(clip_by_global_norm(GRADS, limit, NORM)) == [3.0, 4.0]
    if limit is not None:
        assert float(clip_factor(limit, NORM)) == 1.0


@pytest.mark.parametrize("limit", [2.5, tf.constant(2.5)])
def test_a_limit_below_the_norm_scales_to_it(limit):
    np.testing.assert_allclose(values(clip_by_global_norm(GRADS, limit, NORM)), [1.5, 2.0])
    assert float(clip_factor(limit, NORM)) == pytest.approx(0.5)


@pytest.mark.parametrize("limit", [10.0, tf.constant(10.0)])
def test_a_limit_above_the_norm_changes_nothing(limit):
    np.testing.assert_allclose(values(clip_by_global_norm(GRADS, limit, NORM)), [3.0, 4.0])


def test_a_number_gives_tensorflows_own_bits():
    grads = [
        tf.random.stateless_normal([7, 3], seed=[1, 2]),
        tf.random.stateless_normal([3], seed=[3, 4]),
    ]
    norm = tf.linalg.global_norm(grads)
    ours = clip_by_global_norm(grads, 0.3, norm)
    theirs, _ = tf.clip_by_global_norm(grads, 0.3, norm)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_per_seed_clipping_takes_a_schedules_tensor():
    # Two seeds' gradients stacked: seed 0 (3, 4) norm 5, seed 1 (0.3, 0.4) norm 0.5. A
    # schedule's scalar limit 2.5 clips seed 0 only; at a step where it is 0, nothing is clipped.
    from rl.compiled.stacked_variables import clip_per_seed, per_seed_global_norm

    grads = [tf.constant([3.0, 0.3]), tf.constant([4.0, 0.4])]
    norms = per_seed_global_norm(grads)
    clipped = clip_per_seed(grads, tf.constant(2.5), norms)
    np.testing.assert_allclose([g.numpy() for g in clipped], [[1.5, 0.3], [2.0, 0.4]], rtol=1e-6)
    unclipped = clip_per_seed(grads, tf.constant(0.0), norms)
    np.testing.assert_allclose([g.numpy() for g in unclipped], [[3.0, 0.3], [4.0, 0.4]])
