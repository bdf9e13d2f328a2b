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
    }
    assert {"dqn", "dqn_cartpole", "dqn_acrobot", "dqn_tiny"} <= set(registry.hparams.names())
    assert "dqn" in registry.agents
    assert {"uniform", "prioritized"} <= set(registry.memory.names())
    assert {"greedy", "epsilon_greedy", "sample"} <= set(registry.action_functions.names())
    assert {"linear", "constant", "piecewise"} <= set(registry.schedules.names())
    assert "local" in registry.systems
    assert {"mountain_car_energy", "scale_reward", "clip_reward"} <= set(
        registry.reward_augmentations.names()
    )
