"""Hparam keys that name a registered function an agent calls, and which roles fit there.

A name alone is not enough (`gaussian_noise` is an action function, but DQN cannot call it on
Q-values): each function declares a role, each agent its slots and the roles they can call, and
`check_function_slots` checks the hparams before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rl.errors import UserError, did_you_mean
from rl.registry import Registry


@dataclass(frozen=True)
class FunctionSlot:
    """What one hparam key may name: a function of `registry` registered with one of `roles`."""

    registry: Registry[Callable[..., Any]]
    roles: tuple[str, ...]

    def fitting_names(self) -> list[str]:
        """The registered names this slot accepts (listed in its errors)."""
        return sorted(n for role in self.roles for n in self.registry.names(role))

    def resolve(self, key: str, name: str, agent: str) -> Callable[..., Any]:
        """The function registered as `name`; a UserError if it is unknown or of another role."""
        fitting = self.fitting_names()
        choices = ", ".join(fitting)
        if name not in self.registry:
            raise UserError(
                f"{key}: unknown {self.registry.kind} {name!r}{did_you_mean(name, fitting)}; "
                f"agent {agent!r} takes one of: {choices}"
            )
        role = self.registry.role(name)
        if role not in self.roles:
            has = f"has role {role!r}" if role else "declares no role"
            needed = " or ".join(repr(r) for r in self.roles)
            raise UserError(
                f"{key}: {self.registry.kind} {name!r} {has}, and agent {agent!r} needs role "
                f"{needed}: {choices}"
            )
        return self.registry.get(name)


def resolve_function(agent: Any, key: str) -> Callable[..., Any]:
    """The function that `agent`'s hparam `key` names, checked against its declared slot."""
    slot = type(agent).function_slots[key]
    return slot.resolve(key, getattr(agent.hparams, key), agent.hparams.agent)


def check_function_slots(agent_class: type, hparams: Any) -> None:
    """Resolves every slot `agent_class` declares: a bad name is a UserError before a run."""
    for key, slot in getattr(agent_class, "function_slots", {}).items():
        slot.resolve(key, getattr(hparams, key), hparams.agent)
