"""Where a registered hparams set's values come from: its parent chain, and for every key the
set in that chain (or the command-line flag) that gave it its value.

A set inherits by calling its parent, so whatever the parent switched on silently comes along;
`train.py --list` and `--show_hparams` say where. While a factory runs, a profiler hook notes
which registered factories it calls (the nearest registered caller is the parent), so sets are
written as plain functions. A key whose value equals the parent's comes from the parent
(recursively): a set that assigns what its parent already had is not blamed for it.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

from rl import registry
from rl.hparams.hparams import HParams


def _factory_names() -> dict[CodeType, str]:
    """The code object of every registered set's factory -> its registered name."""
    factories = {name: registry.hparams.get(name) for name in registry.hparams}
    return {f.__code__: name for name, f in factories.items() if hasattr(f, "__code__")}


def direct_parents(name: str) -> list[str]:
    """The registered sets that `name`'s factory calls itself, in call order (none for a root)."""
    return list(_observe(name)[1])


@functools.cache
def _observe(name: str) -> tuple[HParams, tuple[str, ...]]:
    """Runs `name`'s factory once: (its hparams, the registered sets it called directly).
    Cached: factories are pure functions of nothing, and the result is only read."""
    factory = registry.hparams.get(name)
    names = _factory_names()
    own_code = getattr(factory, "__code__", None)
    parents: dict[str, None] = {}  # an ordered set: call order

    def profile(frame: FrameType, event: str, _: Any) -> None:
        if event != "call" or frame.f_code not in names:
            return
        caller = frame.f_back
        while caller is not None and caller.f_code not in names:
            caller = caller.f_back
        if caller is not None and caller.f_code is own_code:
            parents[names[frame.f_code]] = None

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        hparams = factory()
    finally:
        sys.setprofile(previous)
    return hparams, tuple(parents)


def parent_chain(name: str) -> list[str]:
    """`name`, its parent, its parent's parent, ... up to a root set (no set has two parents)."""
    chain = [name]
    while parents := direct_parents(chain[-1]):
        chain.append(parents[0])
    return chain


def flat_values(hparams: HParams) -> dict[str, str]:
    """`"eval.episodes" -> "5"`: `HParams.flat()` with each value as JSON text."""
    return {key: json.dumps(value) for key, value in hparams.flat().items()}


def value_sources(name: str) -> dict[str, str]:
    """For every key of set `name`: the set in its chain that gave the key its value."""
    inherited = [(flat_values(_observe(p)[0]), value_sources(p)) for p in direct_parents(name)]
    return {
        key: next((src[key] for values, src in inherited if values.get(key) == value), name)
        for key, value in flat_values(_observe(name)[0]).items()
    }


def describe_resolved(
    name: str, resolved: HParams, flag_for_key: Callable[[str], str]
) -> list[str]:
    """Lines for `--show_hparams`: the chain, then `key = value  <- source` for every key of
    `resolved`, the source being the set that gave the value or the flag that changed it."""
    registered = flat_values(_observe(name)[0])
    sources = value_sources(name)
    lines = [f"hparams set {name} (chain: {' <- '.join(parent_chain(name))})"]
    values = flat_values(resolved)
    width = max(len(key) for key in values)
    value_width = min(32, max(len(value) for value in values.values()))
    for key, value in values.items():
        source = sources[key]
        if registered.get(key) != value:
            source = f"{flag_for_key(key)} (set {source}: {registered.get(key)})"
        lines.append(f"  {key:<{width}} = {value:<{value_width}}  <- {source}")
    return lines
