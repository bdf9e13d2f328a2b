"""`--sys local`: run every copy in this process, one after another."""

from __future__ import annotations

from collections.abc import Callable

from rl.registry import register_system


@register_system("local")
def run_local(jobs: list[Callable[[], object]]) -> list[object]:
    return [job() for job in jobs]
