"""`rmsprop_torch` is torch.optim.RMSprop (SB3's A2C optimizer): two steps computed by hand.

w0 = [1, -2], gradients g1 = [0.5, -0.1], g2 = [-0.2, 0.3], lr 0.1, alpha 0.99, eps 1e-5:
  v1 = 0.01 g1^2 = [0.0025, 0.0001]; sqrt(v1) + eps = [0.05001, 0.01001]
  w1 = w0 - 0.1 g1 / (sqrt(v1) + eps) = [1 - 0.99980004, -2 + 0.99900100] = [0.00019996, -1.000999]
  v2 = 0.99 v1 + 0.01 g2^2 = [0.002875, 0.000999]
  w2 = w1 - 0.1 g2 / (sqrt(v2) + eps) = [0.37313233, -1.94985679]
(torch 2.x's RMSprop(lr=0.1, alpha=0.99, eps=1e-5) gives the same numbers.) Keras' RMSprop
(rho 0.9, eps inside the root) ends at [0.80667131, -1.98670079] instead.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rl.agents.optimizers import make_optimizer

W0 = [1.0, -2.0]
GRADS = ([0.5, -0.1], [-0.2, 0.3])
TORCH_W1 = [1.99960008e-04, -1.00099900]
TORCH_W2 = [0.37313233, -1.94985679]
TORCH_V2 = [0.002875, 0.000999]
KERAS_W2 = [0.80667131, -1.98670079]


def _steps(name: str, grads=GRADS, w0=W0):
    optimizer = make_optimizer(name, 0.1, 1e-5)
    w = tf.Variable(w0, dtype=tf.float32)
    optimizer.build([w])
    values = []
    for g in grads:
        optimizer.apply_gradients([(tf.constant(g, tf.float32), w)])
        values.append(w.numpy().copy())
    return optimizer, w, values


def test_two_steps_equal_torch_rmsprop_by_hand():
    optimizer, _, (w1, w2) = _steps("rmsprop_torch")
    np.testing.assert_allclose(w1, TORCH_W1, rtol=1e-5, atol=1e-7)  # float32: 1 - 0.9998
    np.testing.assert_allclose(w2, TORCH_W2, rtol=1e-5)
    (velocity,) = [v for v in optimizer.variables if "velocity" in v.name]
    np.testing.assert_allclose(velocity.numpy(), TORCH_V2, rtol=1e-5)


def test_keras_rmsprop_is_a_different_update():
    """The name "rmsprop" stays Keras' (IMPALA's sets use its TF1-style eps inside the root)."""
    _, _, (_, w2) = _steps("rmsprop")
    np.testing.assert_allclose(w2, KERAS_W2, rtol=1e-5)
    assert np.abs(np.array(w2) - TORCH_W2).max() > 0.3


def test_a_stacked_variable_updates_like_each_slice_on_its_own():
    """Element-wise, as `rl.compiled.stacked_variables` needs: one optimizer over a [2, 2] stack of
    two seeds' weights equals each seed's own optimizer."""
    other_w0, other_grads = [0.3, 0.7], ([1.5, 0.0], [-4.0, 2e-6])
    _, stacked, _ = _steps(
        "rmsprop_torch",
        grads=[np.stack([g, h]) for g, h in zip(GRADS, other_grads, strict=True)],
        w0=np.stack([W0, other_w0]),
    )
    _, first, _ = _steps("rmsprop_torch")
    _, second, _ = _steps("rmsprop_torch", grads=other_grads, w0=other_w0)
    np.testing.assert_array_equal(stacked.numpy(), np.stack([first.numpy(), second.numpy()]))


def test_checkpoint_restores_the_velocity(tmp_path):
    """A restored optimizer's next step equals the uninterrupted one's."""
    optimizer, w, _ = _steps("rmsprop_torch", grads=GRADS[:1])
    path = tf.train.Checkpoint(optimizer=optimizer, w=w).write(str(tmp_path / "ckpt"))
    fresh = make_optimizer("rmsprop_torch", 0.1, 1e-5)
    fresh_w = tf.Variable([0.0, 0.0])
    fresh.build([fresh_w])
    tf.train.Checkpoint(optimizer=fresh, w=fresh_w).read(path).assert_consumed()
    fresh.apply_gradients([(tf.constant(GRADS[1]), fresh_w)])
    np.testing.assert_allclose(fresh_w.numpy(), TORCH_W2, rtol=1e-5)
