"""One registry class for every kind of named component (tensor2tensor's registry, minus magic):
explicit `register_<kind>("name")` and imports, and a lookup miss that suggests close names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from rl.errors import UserError, did_you_mean

T = TypeVar("T")

# Registry keys are explicit snake_case names. Env names may also be gymnasium-style ids
# ("CartPole-v1", "tf/CartPole-v1"), so each registry carries its own pattern.
SNAKE_CASE = re.compile(r"^[a-z][a-z0-9_]*$")
ENV_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_/.:\-]*$")


class Registry(Generic[T]):
    """A name -> object map for one kind of component."""

    def __init__(self, kind: str, name_pattern: re.Pattern[str] = SNAKE_CASE) -> None:
        self.kind = kind
        self._pattern = name_pattern
        self._items: dict[str, T] = {}
        self._roles: dict[str, str | None] = {}

    def register(self, name: str, obj: T | None = None, *, role: str | None = None) -> Any:
        """Registers `obj` under `name`; without `obj`, a decorator that does."""
        if obj is None:

            def decorator(target: T) -> T:
                self.register(name, target, role=role)
                return target

            return decorator
        if not self._pattern.match(name):
            raise ValueError(f"{self.kind} name {name!r} must match {self._pattern.pattern}")
        if name in self._items and self._items[name] is not obj:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj
        self._roles[name] = role
        return obj

    def unregister(self, name: str) -> None:
        """Forgets `name`, if registered: a component that lived for a while (a test's, a
        generated set that a tuning study registered and is done with)."""
        self._items.pop(name, None)
        self._roles.pop(name, None)

    def get(self, name: str) -> T:
        """Returns the object registered as `name`; a miss is a `UserError` with suggestions."""
        try:
            return self._items[name]
        except KeyError:
            raise UserError(self.unknown_message(name)) from None

    def unknown_message(self, name: str) -> str:
        names = sorted(self._items)
        listed = ", ".join(names) if names else "(none registered)"
        return f"unknown {self.kind} {name!r}{did_you_mean(name, names)}; registered: {listed}"

    def names(self, role: str | None = None) -> list[str]:
        """Every registered name, or only those registered with `role`."""
        return sorted(n for n in self._items if role is None or self._roles[n] == role)

    def role(self, name: str) -> str | None:
        """The role `name` was registered with (None: none declared); a miss is a UserError."""
        self.get(name)
        return self._roles[name]

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._items)


hparams: Registry[Callable[[], Any]] = Registry("hparams set")
envs: Registry[Callable[..., Any]] = Registry("env", ENV_ID)
models: Registry[Callable[..., Any]] = Registry("model")
memory: Registry[Callable[..., Any]] = Registry("memory")
agents: Registry[type] = Registry("agent")
action_functions: Registry[Callable[..., Any]] = Registry("action function")
gradient_functions: Registry[Callable[..., Any]] = Registry("gradient function")
advantage_estimators: Registry[Callable[..., Any]] = Registry("advantage estimator")
schedules: Registry[Callable[..., Any]] = Registry("schedule")
systems: Registry[Callable[..., Any]] = Registry("system")
reward_augmentations: Registry[Callable[..., Any]] = Registry("reward augmentation")
optimizers: Registry[Callable[[float, float], Any]] = Registry("optimizer")
# Hyper-parameter search spaces of `python -m rl.tune` (rl/tune/search_spaces.py).
search_spaces: Registry[Any] = Registry("search space")

# Every registry above by its variable name, in the order declared (train.py --list).
ALL: dict[str, Registry[Any]] = {k: v for k, v in globals().items() if isinstance(v, Registry)}

register_hparams, get_hparams = hparams.register, hparams.get
register_env, get_env_factory = envs.register, envs.get
register_model, get_model = models.register, models.get
register_memory, get_memory = memory.register, memory.get
register_agent, get_agent = agents.register, agents.get
register_action_function = action_functions.register
register_gradient_function = gradient_functions.register
get_gradient_function = gradient_functions.get
register_advantage_estimator = advantage_estimators.register
get_advantage_estimator = advantage_estimators.get
register_schedule = schedules.register
register_system, get_system = systems.register, systems.get
register_reward_augmentation = reward_augmentations.register
get_reward_augmentation = reward_augmentations.get
register_optimizer, get_optimizer = optimizers.register, optimizers.get
register_search_space, get_search_space = search_spaces.register, search_spaces.get
