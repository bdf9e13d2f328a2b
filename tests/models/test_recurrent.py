"""Recurrent cores: unrolling equals stepping, resets zero the state, burn-in detaches."""

import numpy as np
import pytest
import tensorflow as tf

from rl.envs import make_vector_env
from rl.errors import UserError
from rl.models.recurrent import RecurrentActorCritic, RecurrentCore, RecurrentQNetwork, reset_where
from rl.models.torch_init import torch_init


def test_reset_where_zeroes_flagged_rows_only():
    state = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out = reset_where(state, tf.constant([False, True, False]))
    np.testing.assert_array_equal(out.numpy(), [[1, 2], [0, 0], [5, 6]])


@pytest.mark.parametrize(("cell", "state_size"), [("gru", 3), ("lstm", 6)])
def test_unroll_equals_steps_with_resets(cell, state_size):
    core = RecurrentCore(cell, 3)
    assert core.state_size == state_size
    rng = np.random.default_rng(0)
    inputs = tf.constant(rng.normal(size=[5, 2, 4]), tf.float32)  # [T, B, F]
    state0 = tf.constant(rng.normal(size=[2, state_size]), tf.float32)
    # Env 0 starts an episode before step 2, env 1 before steps 0 and 4.
    starts = np.zeros([5, 2], bool)
    starts[2, 0] = starts[0, 1] = starts[4, 1] = True
    outputs, states = core.unroll(inputs, state0, tf.constant(starts))
    state = state0
    for t in range(5):
        state = reset_where(state, tf.constant(starts[t]))
        output, state = core(inputs[t], state)
        np.testing.assert_allclose(outputs[t].numpy(), output.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(states[t].numpy(), state.numpy(), rtol=1e-5, atol=1e-6)
    # A reset really starts from zeros: env 1's first step equals a step from a zero state.
    _, from_zero = core(inputs[0, 1:], tf.zeros([1, state_size]))
    np.testing.assert_allclose(states[0, 1:].numpy(), from_zero.numpy(), rtol=1e-5, atol=1e-6)


def test_detach_stops_gradients_into_earlier_steps():
    core = RecurrentCore("gru", 3)
    inputs = tf.Variable(tf.random.normal([4, 1, 2], seed=1))
    with tf.GradientTape(persistent=True) as tape:
        detached, _ = core.unroll(
            inputs, core.initial_state(1), detach=tf.constant([[False], [False], [True], [False]])
        )
        attached, _ = core.unroll(inputs, core.initial_state(1))
        loss_detached = tf.reduce_sum(detached[3])
        loss_attached = tf.reduce_sum(attached[3])
    grad_detached = tape.gradient(loss_detached, inputs).numpy()
    grad_attached = tape.gradient(loss_attached, inputs).numpy()
    # Steps 0 and 1 come before the detach point (step 2): no gradient reaches them.
    np.testing.assert_array_equal(grad_detached[:2], 0.0)
    assert np.all(np.abs(grad_attached[:2]) > 0)
    np.testing.assert_allclose(grad_detached[2:], grad_attached[2:], rtol=1e-5)
    np.testing.assert_allclose(detached.numpy(), attached.numpy())  # values unchanged


def test_networks_unroll_equals_step():
    _, spec = make_vector_env("MaskedCartPole-v1", 2, seed=0)
    obs = tf.random.normal([3, 2, 2], seed=2)  # [T, B, obs]
    model = RecurrentActorCritic(spec, "mlp", [8], "tanh", "lstm", 4, separate_torsos=True)
    assert model.state_size == 16  # policy core [h, c] then value core [h, c]
    state = model.initial_state(2)
    params, value, _ = model.unroll(obs, state)
    for t in range(3):
        step_params, step_value, state = model.step(obs[t], state)
        np.testing.assert_allclose(params[t].numpy(), step_params.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(value[t].numpy(), step_value.numpy(), rtol=1e-5, atol=1e-6)
    q_net = RecurrentQNetwork(2, "mlp", [8], "relu", True, "gru", 4)
    state = q_net.initial_state(2)
    q_all, _ = q_net.unroll(obs, state)
    for t in range(3):
        q, state = q_net.step(obs[t], state)
        np.testing.assert_allclose(q_all[t].numpy(), q.numpy(), rtol=1e-5, atol=1e-6)


def test_unknown_cell_is_a_user_error_naming_the_choices():
    with pytest.raises(UserError, match="did you mean 'gru'.*choose one of"):
        RecurrentCore("gruu", 4)


def test_core_first_runs_the_core_on_the_observation_and_unrolls_like_steps():
    # SB3-contrib's MlpLstmPolicy order: observation -> LSTM -> MLP -> heads.
    _, spec = make_vector_env("MaskedCartPole-v1", 2, seed=0)
    model = RecurrentActorCritic(
        spec, "mlp", [8], "relu", "lstm", 4, separate_torsos=True, core_first=True
    )
    obs = tf.random.normal([3, 2, 2], seed=3)  # [T, B, obs]
    starts = tf.constant([[False, False], [True, False], [False, True]])
    state = tf.random.normal([2, model.state_size], seed=4)
    params, value, states = model.unroll(obs, state, starts)
    # The core reads the 2 observation numbers; the torso's Dense reads the core's 4 outputs.
    assert model.core.cell.kernel.shape == (2, 16) and model.value_core.cell.kernel.shape == (2, 16)
    assert [v.shape for v in model.torso.trainable_variables] == [(4, 8), (8,)]
    for t in range(3):
        state = reset_where(state, starts[t])
        step_params, step_value, state = model.step(obs[t], state)
        np.testing.assert_allclose(params[t].numpy(), step_params.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(value[t].numpy(), step_value.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(states[t].numpy(), state.numpy(), rtol=1e-5, atol=1e-6)


def test_normalize_obs_standardizes_before_the_network():
    _, spec = make_vector_env("MaskedCartPole-v1", 2, seed=0)
    model = RecurrentActorCritic(spec, "mlp", [8], "tanh", "gru", 4, normalize_obs=True)
    plain = RecurrentActorCritic(spec, "mlp", [8], "tanh", "gru", 4)
    obs = tf.constant([[1.0, 0.1], [-2.0, 0.3]])
    model.step(obs, model.initial_state(2))
    plain.step(obs, plain.initial_state(2))
    for target, source in zip(plain.trainable_variables, model.trainable_variables, strict=True):
        target.assign(source)
    model.obs_normalizer.mean.assign([1.0, 0.2])
    model.obs_normalizer.var.assign([4.0, 0.01])
    # By hand: ([1, 0.1] - [1, 0.2]) / [2, 0.1] = [0, -1]; ([-2, 0.3] - ...) = [-1.5, 1].
    standardized = tf.constant([[0.0, -1.0], [-1.5, 1.0]])
    expected, _, _ = plain.step(standardized, plain.initial_state(2))
    got, _, _ = model.step(obs, model.initial_state(2))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
    model.update_obs_statistics(obs)  # the agent's acting call moves the statistics
    assert float(model.obs_normalizer.count.numpy()) == pytest.approx(1e-4 + 2.0)


def test_torch_init_draws_pytorch_default_uniforms():
    _, spec = make_vector_env("MaskedCartPole-v1", 2, seed=0)
    tf.keras.utils.set_random_seed(0)
    model = RecurrentActorCritic(
        spec, "mlp", [64], "relu", "lstm", 64, separate_torsos=True, core_first=True
    )
    model.step(tf.zeros([1, 2]), model.initial_state(1))
    torch_init(model)

    def check(variable, bound, terms=1):
        # U(-b, b) has standard deviation b / sqrt(3); the sum of two such, b sqrt(2 / 3).
        values = variable.numpy().ravel()
        assert np.abs(values).max() <= terms * bound
        std = bound * np.sqrt(terms / 3.0)
        assert abs(values.std() - std) < 0.15 * std, (variable.name, values.std(), std)

    # nn.Linear: U(+-1/sqrt(fan_in)) for weight and bias; the heads too (ortho_init=False).
    check(model.torso.layers[-1].kernel, 1 / 8.0)  # fan_in 64 (the LSTM's output)
    check(model.policy_head.kernel, 1 / 8.0)
    check(model.value_head.kernel, 1 / 8.0)
    # nn.LSTM: every weight U(+-1/sqrt(hidden)); Keras' one bias = b_ih + b_hh.
    cell = model.value_core.cell
    check(cell.kernel, 1 / 8.0)
    check(cell.recurrent_kernel, 1 / 8.0)
    check(cell.bias, 1 / 8.0, terms=2)
