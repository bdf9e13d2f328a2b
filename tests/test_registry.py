"""The one Registry class: registration, lookup, and the error a miss produces."""

import pytest

import rl  # noqa: F401  (fills the registries)
from rl import registry
from rl.errors import UserError
from rl.registry import Registry


def test_register_and_get_by_explicit_name():
    reg = Registry("widget")

    @reg.register("small_widget")
    def small():
        return 1

    reg.register("big_widget", "big")
    assert reg.get("small_widget") is small
    assert reg.get("big_widget") == "big"
    assert reg.names() == ["big_widget", "small_widget"]
    assert "small_widget" in reg and "nope" not in reg
    assert len(reg) == 2


def test_miss_names_kind_lists_names_and_suggests():
    reg = Registry("widget")
    reg.register("small_widget", 1)
    reg.register("big_widget", 2)
    with pytest.raises(UserError) as info:
        reg.get("smal_widget")
    message = str(info.value)
    assert message.startswith("unknown widget 'smal_widget'")
    assert "did you mean 'small_widget'" in message
    assert "registered: big_widget, small_widget" in message


def test_duplicate_and_bad_names_are_programming_errors():
    reg = Registry("widget")
    reg.register("a_widget", 1)
    with pytest.raises(ValueError, match="already registered"):
        reg.register("a_widget", 2)
    with pytest.raises(ValueError, match="must match"):
        reg.register("CamelCase", 3)
    reg.unregister("a_widget")  # forgotten: the name takes another object, its role too
    assert "a_widget" not in reg and reg.names() == []
    reg.register("a_widget", 2, role="other")
    assert reg.get("a_widget") == 2 and reg.role("a_widget") == "other"
    reg.unregister("never_registered")  # nothing to forget is not an error


def test_every_kind_has_a_registry_and_the_core_parts_are_registered():
    assert set(registry.ALL) == {
        "hparams",
        "envs",
        "models",
        "memory",
        "agents",
        "action_functions",
        "gradient_functions",
        "advantage_estimators",
        "schedules",
        "systems",
        "reward_augmentations",
        "optimizers",
        "search_spaces",
    }
    assert {"dqn", "dqn_cartpole", "dqn_acrobot", "dqn_tiny"} <= set(registry.hparams.names())
    assert "dqn" in registry.agents
    assert {"uniform", "prioritized"} <= set(registry.memory.names())
    assert {"greedy", "epsilon_greedy", "sample"} <= set(registry.action_functions.names())
    assert {"td_huber", "td_mse", "categorical_loss"} <= set(registry.gradient_functions.names())
    assert registry.optimizers.names() == ["adam", "rmsprop", "rmsprop_torch", "sgd"]
    assert {"linear", "constant", "piecewise"} <= set(registry.schedules.names())
    assert "local" in registry.systems
    assert {"ppo", "dqn"} <= set(registry.search_spaces.names())  # python -m rl.tune --space
    assert {"mountain_car_energy", "scale_reward", "clip_reward"} <= set(
        registry.reward_augmentations.names()
    )


def test_roles_are_declared_listed_and_checked_on_lookup():
    reg = Registry("widget")
    reg.register("round_widget", 1, role="round")
    reg.register("square_widget", 2, role="square")

    @reg.register("plain_widget")
    def plain() -> int:
        return 3

    assert reg.names(role="round") == ["round_widget"]
    assert reg.names() == ["plain_widget", "round_widget", "square_widget"]
    assert reg.role("square_widget") == "square" and reg.role("plain_widget") is None
    with pytest.raises(UserError, match="unknown widget 'squar_widget'.*did you mean"):
        reg.role("squar_widget")


def test_the_registered_roles_of_the_selectable_functions():
    # The slots of the agents (rl/agents/function_slots.py) rely on these roles.
    assert registry.action_functions.names("q_exploration") == ["epsilon_greedy"]
    assert registry.action_functions.names("action_noise") == ["gaussian_noise"]
    assert registry.action_functions.names("stateful_action_noise") == ["ornstein_uhlenbeck"]
    assert registry.gradient_functions.names("td_loss") == ["td_huber", "td_mse"]
    assert registry.gradient_functions.names("distributional_loss") == ["categorical_loss"]
