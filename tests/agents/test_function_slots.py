"""Agents call the action and gradient functions their hparams name, looked up in the registries
(rl/agents/function_slots.py): an override swaps the function the agent actually calls, a
function of the wrong role is refused, and every set's defaults are the functions used before
the names existed."""

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.agents.action_functions import epsilon_greedy, gaussian_noise, ornstein_uhlenbeck
from rl.agents.function_slots import check_function_slots
from rl.agents.gradient_functions import categorical_loss, td_huber, td_mse
from rl.agents.gradient_functions.qrdqn import quantile_huber_loss
from rl.envs import make_vector_env
from rl.errors import UserError


@pytest.fixture
def register(request):
    """Registers a function for one test only: it is unregistered afterwards."""

    def register_for_test(reg: registry.Registry, name: str, function, role: str) -> None:
        reg.register(name, function, role=role)
        request.addfinalizer(lambda: reg.unregister(name))

    return register_for_test


def make_agent(hparams_set: str, overrides: str = "", env_id: str = "CartPole-v1"):
    hp = registry.get_hparams(hparams_set)()
    hp.jit_compile = False  # seconds of XLA compile per test; training tests run XLA
    hp.override(overrides)
    hp.num_envs = 1
    hp.freeze()
    _, spec = make_vector_env(env_id, 1, seed=0)
    return registry.get_agent(hp.agent)(spec, hp, seed=0), spec


def random_obs(spec, n: int) -> tf.Tensor:
    rng = np.random.default_rng(0)
    return tf.constant(rng.uniform(-1, 1, size=(n, *spec.obs_shape)), tf.float32)


# ------------------------------------------------------------------------ action functions
def always_last_action(q_values: tf.Tensor, generator, epsilon) -> tf.Tensor:
    """Role q_exploration: the highest-numbered action, whatever the Q-values say."""
    del generator, epsilon
    last = tf.cast(tf.shape(q_values)[-1] - 1, tf.int64)
    return tf.fill([tf.shape(q_values)[0]], last)


def test_a_registered_action_function_chosen_by_override_drives_dqn_actions(register):
    register(registry.action_functions, "always_last", always_last_action, "q_exploration")
    default, spec = make_agent("dqn_tiny")
    obs = random_obs(spec, 64)
    # Before learning_starts, epsilon_greedy explores with epsilon 1: both CartPole actions.
    assert set(default.act(obs, explore=True).numpy()) == {0, 1}
    chosen, _ = make_agent("dqn_tiny", "action_function=always_last")
    assert chosen.action_function is always_last_action
    np.testing.assert_array_equal(chosen.act(obs, explore=True).numpy(), np.ones(64))
    # Evaluation stays greedy on the Q-values (not the exploring function).
    greedy = tf.argmax(chosen.q_network(obs), axis=-1).numpy()
    np.testing.assert_array_equal(chosen.act(obs, explore=False).numpy(), greedy)


def keep_action(action, generator, sigma, low, high):
    """Role action_noise: no noise at all."""
    del generator, sigma, low, high
    return action


def test_td3_calls_the_named_noise_function_and_keeps_state_only_for_stateful_noise(register):
    register(registry.action_functions, "keep_action", keep_action, "action_noise")
    agent, spec = make_agent(
        "td3_tiny", "learning_starts=0,action_function=keep_action", "Pendulum-v1"
    )
    obs = random_obs(spec, 5)
    explored = agent.act(obs, explore=True).numpy()
    np.testing.assert_array_equal(explored, agent.act(obs, explore=False).numpy())
    assert not agent.noise_is_stateful
    ou, _ = make_agent("td3_tiny", "action_function=ornstein_uhlenbeck", "Pendulum-v1")
    assert ou.action_function is ornstein_uhlenbeck and ou.noise_is_stateful


# ------------------------------------------------------------------------- gradient functions
def zeroed_dqn(overrides: str):
    """dqn_tiny with every network weight 0: Q(s, a) = 0 everywhere, so the TD target is the
    reward (discount * 0) and the TD error is the reward too."""
    agent, spec = make_agent("dqn_tiny", overrides)
    for variable in agent.q_network.variables + agent.target_network.variables:
        variable.assign(tf.zeros_like(variable))
    sample = {
        "obs": random_obs(spec, 2),
        "next_obs": random_obs(spec, 2),
        "action": tf.constant([1, 0], tf.int64),
        "reward": tf.constant([3.0, 0.5]),
        "discount": tf.constant([0.9, 0.0]),
        "weights": tf.constant([1.0, 1.0]),
    }
    return agent, sample


def test_the_loss_override_swaps_the_loss_the_dqn_agent_minimises():
    # TD errors 3 and 0.5. Huber (delta 1): 3 - 0.5 = 2.5 and 0.5 * 0.25 = 0.125, mean 1.3125.
    # td_mse: 0.5 * 9 = 4.5 and 0.125, mean 2.3125.
    huber, sample = zeroed_dqn("")
    assert huber.loss_function is td_huber
    loss, aux = huber.loss(sample)
    np.testing.assert_allclose(aux["td_error"].numpy(), [3.0, 0.5])
    assert float(loss) == pytest.approx(1.3125)
    mse, sample = zeroed_dqn("loss=td_mse")
    assert mse.loss_function is td_mse
    loss, _ = mse.loss(sample)
    assert float(loss) == pytest.approx(2.3125)


# ------------------------------------------------------------------------------ wrong roles
@pytest.mark.parametrize(
    ("hparams_set", "override", "words"),
    [
        ("dqn_tiny", "action_function=gaussian_noise", ["role 'action_noise'", "'q_exploration'"]),
        ("dqn_tiny", "loss=categorical_loss", ["role 'distributional_loss'", "'td_loss'"]),
        ("c51_tiny", "loss=td_huber", ["role 'td_loss'", "'distributional_loss'"]),
        ("drqn_tiny", "loss=critic_loss", ["declares no role", "td_huber, td_mse"]),
        ("td3_tiny", "action_function=epsilon_greedy", ["role 'q_exploration'", "gaussian_noise"]),
        ("maddpg_tiny", "action_function=ornstein_uhlenbeck", ["'stateful_action_noise'"]),
        (
            "dqn_tiny",
            "loss=td_mce",
            ["unknown gradient function 'td_mce'", "did you mean 'td_mse'"],
        ),
    ],
)
def test_a_function_of_the_wrong_role_or_an_unknown_name_is_a_user_error(
    hparams_set, override, words
):
    hp = registry.get_hparams(hparams_set)().override(override)
    key = override.split("=")[0]
    with pytest.raises(UserError) as error:
        check_function_slots(registry.get_agent(hp.agent), hp)
    message = str(error.value)
    assert message.startswith(f"{key}: ") and f"agent {hp.agent!r}" in message
    for word in words:
        assert word in message, message


def test_the_agent_itself_refuses_a_wrong_role_when_built():
    with pytest.raises(UserError, match="action_function: .*'q_exploration'"):
        make_agent("dqn_tiny", "action_function=sample")


# ------------------------------------------------------------------------- old sets unchanged
def test_every_sets_defaults_resolve_to_the_functions_used_before_the_names_existed():
    # Before: td_loss "huber" in every DQN-family set (C51 always used categorical_loss), the
    # hard-coded epsilon_greedy and MADDPG's gaussian_noise, and action_noise per TD3/DDPG set.
    ou_sets = {"ddpg_tiny", "ddpg_mountaincar_continuous", "td3_mountaincar_continuous"}
    checked = set()
    for name in registry.hparams.names():
        hp = registry.get_hparams(name)()
        agent_class = registry.get_agent(hp.agent)
        slots = getattr(agent_class, "function_slots", {})
        resolved = {
            key: slot.resolve(key, getattr(hp, key), hp.agent) for key, slot in slots.items()
        }
        if hp.agent in ("dqn", "drqn"):
            assert resolved == {"action_function": epsilon_greedy, "loss": td_huber}, name
        elif hp.agent == "c51":
            assert resolved == {"action_function": epsilon_greedy, "loss": categorical_loss}, name
        elif hp.agent == "qrdqn":  # new since the names: its loss has its own role
            assert resolved == {"action_function": epsilon_greedy, "loss": quantile_huber_loss}
        elif hp.agent in ("td3", "ddpg"):
            noise = ornstein_uhlenbeck if name in ou_sets else gaussian_noise
            assert resolved == {"action_function": noise}, name
        elif hp.agent == "maddpg":
            assert resolved == {"action_function": gaussian_noise}, name
        else:
            assert resolved == {}, f"{name}: new slots of {hp.agent} need a check here"
        checked.add(hp.agent)
    assert {"dqn", "drqn", "c51", "qrdqn", "td3", "ddpg", "maddpg"} <= checked
