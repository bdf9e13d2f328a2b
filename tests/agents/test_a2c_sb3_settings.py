"""The `a2c` sets build Stable-Baselines3's A2C: its network, initialization, optimizer and loss
weights (an update then equals SB3's A2C.train() on the same weights and batch)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401  (fills the registries)
from rl import registry
from rl.agents.on_policy import PolicyOutputs
from rl.agents.torch_rmsprop import TorchRMSprop
from rl.envs import make_vector_env


def _agent(hparams_set: str, overrides: str = ""):
    hp = registry.get_hparams(hparams_set)()
    hp.override(overrides)
    hp.freeze()
    _, spec = make_vector_env(hp.env, hp.num_envs, seed=0)
    return registry.get_agent(hp.agent)(spec, hp, seed=0)


def _dense_layers(torso) -> list:
    return [layer for layer in torso.body.layers if isinstance(layer, tf.keras.layers.Dense)]


def _assert_orthogonal(kernel: np.ndarray, gain: float) -> None:
    """Rows or columns (whichever are fewer) orthonormal, times `gain`."""
    small = kernel @ kernel.T if kernel.shape[0] <= kernel.shape[1] else kernel.T @ kernel
    np.testing.assert_allclose(small, gain**2 * np.eye(len(small)), atol=1e-5)


def test_a2c_cartpole_has_sb3s_separate_orthogonal_networks_and_rmsprop():
    agent = _agent("a2c_cartpole")
    model = agent.model
    assert (
        isinstance(agent.learner.optimizer, TorchRMSprop) and agent.learner.optimizer.alpha == 0.99
    )
    assert agent.learner.optimizer.epsilon == pytest.approx(1e-5)
    assert model.value_torso is not None
    for torso in (model.torso, model.value_torso):
        layers = _dense_layers(torso)
        assert [layer.units for layer in layers] == [64, 64]
        assert all(layer.activation is tf.keras.activations.tanh for layer in layers)
        for layer in layers:
            _assert_orthogonal(layer.kernel.numpy(), np.sqrt(2.0))
            np.testing.assert_array_equal(layer.bias.numpy(), 0.0)
    _assert_orthogonal(model.policy_head.kernel.numpy(), 0.01)
    _assert_orthogonal(model.value_head.kernel.numpy(), 1.0)


def test_orthogonal_init_off_keeps_keras_glorot_kernels():
    agent = _agent("a2c_cartpole", "orthogonal_init=False")
    (kernel,) = [
        d.kernel.numpy() for d in _dense_layers(agent.model.torso) if d.kernel.shape[0] == 4
    ]
    assert np.abs(kernel @ kernel.T - 2.0 * np.eye(4)).max() > 0.1


def test_a2c_total_loss_weighs_the_value_loss_as_sb3():
    """SB3: -mean(A log pi) + 0.5 * MSE(R, V) (vf_coef 0.5 on the plain MSE), ent_coef 0.
    log pi = [-1, -2], A = [2, 3]: policy loss -mean(-2, -6) = 4; V = [0.5, 1], R = [1.5, 3]:
    MSE = mean(1, 4) = 2.5, times 0.5 = 1.25; total 5.25."""
    agent = _agent("a2c_cartpole")
    minibatch = {
        "advantage": tf.constant([2.0, 3.0]),
        "return": tf.constant([1.5, 3.0]),
        "mask": tf.ones([2]),
    }
    outputs = PolicyOutputs(
        log_prob=tf.constant([-1.0, -2.0]),
        entropy=tf.constant([0.6, 0.7]),
        value=tf.constant([0.5, 1.0]),
    )
    loss, aux = agent.loss(minibatch, outputs)
    assert float(aux["policy_loss"]) == pytest.approx(4.0)
    assert float(loss) == pytest.approx(5.25)
