"""Optimizers are registered by name: `make_optimizer` and the agents look them up there."""

import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.agents.optimizers import make_optimizer
from rl.agents.torch_rmsprop import TorchRMSprop
from rl.envs import make_vector_env
from rl.errors import UserError


def test_the_registered_optimizers_and_what_each_builds():
    assert registry.optimizers.names() == ["adam", "rmsprop", "rmsprop_torch", "sgd"]
    adam = make_optimizer("adam", 0.01, 1e-5)
    assert isinstance(adam, tf.keras.optimizers.Adam) and adam.epsilon == pytest.approx(1e-5)
    assert isinstance(make_optimizer("rmsprop", 0.01, 1e-5), tf.keras.optimizers.RMSprop)
    assert isinstance(make_optimizer("rmsprop_torch", 0.01, 1e-5), TorchRMSprop)
    sgd = make_optimizer("sgd", 0.25, 1e-5)
    assert isinstance(sgd, tf.keras.optimizers.SGD)
    assert float(sgd.learning_rate) == pytest.approx(0.25)


def test_an_unknown_optimizer_is_a_user_error_with_suggestions():
    with pytest.raises(UserError) as error:
        make_optimizer("adm", 0.01, 1e-5)
    assert str(error.value) == (
        "unknown optimizer 'adm' (did you mean 'adam'?); "
        "registered: adam, rmsprop, rmsprop_torch, sgd"
    )


def test_an_agent_builds_the_optimizer_its_hparams_name(request):
    built = []

    def recording_sgd(lr: float, epsilon: float) -> tf.keras.optimizers.Optimizer:
        built.append((lr, epsilon))
        return tf.keras.optimizers.SGD(learning_rate=lr)

    registry.register_optimizer("recording_sgd", recording_sgd)
    request.addfinalizer(lambda: registry.optimizers.unregister("recording_sgd"))
    hp = registry.get_hparams("dqn_tiny")().override("optimizer=recording_sgd,lr=0.125")
    hp.freeze()
    _, spec = make_vector_env("CartPole-v1", 1, seed=0)
    agent = registry.get_agent("dqn")(spec, hp, seed=0)
    assert isinstance(agent.learner.optimizer, tf.keras.optimizers.SGD)
    assert built == [(0.125, hp.adam_epsilon)]
