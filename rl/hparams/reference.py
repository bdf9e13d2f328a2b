"""Markdown reference of every registered hparams set: `python -m rl.hparams.reference`.

Generated from the declarations themselves (key, type, value, doc), so the documentation of
hyper-parameters cannot drift from the code; docs/ can include the output.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable
from typing import Any

import rl.hparams  # noqa: F401  (registers every schedule and hparams set)
from rl import registry
from rl.hparams.hparams import HParams


def set_reference(name: str, factory: Callable[[], HParams]) -> str:
    """One set as a Markdown section: its docstring, then a table of its (flattened) keys."""
    hp = factory()
    lines = [f"## `{name}`", ""]
    doc = inspect.getdoc(factory)
    if doc:
        lines += [doc, ""]
    lines += ["| key | type | default | doc |", "|---|---|---|---|"]
    for key, type_name, value, key_doc in _rows(hp, prefix=""):
        cells = [f"`{key}`", f"`{type_name}`", f"`{value}`", key_doc]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _rows(hp: HParams, prefix: str) -> list[tuple[str, str, str, str]]:
    rows = []
    for key, value in hp.items():
        type_name = hp.type_name(key)
        if type_name == "hparams":
            rows += _rows(value, prefix=f"{prefix}{key}.")
            continue
        data: Any = hp.to_dict()[key]
        shown = data if isinstance(data, str) and type_name == "schedule" else json.dumps(data)
        rows.append((prefix + key, type_name, shown, hp.doc(key)))
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def reference_markdown(sets: registry.Registry[Callable[[], Any]] = registry.hparams) -> str:
    """The reference of every set in `sets` (by default the hparams registry), by name."""
    sections = ["# Hyper-parameter sets", ""]
    if not len(sets):
        sections.append("(no hparams sets are registered)\n")
    sections += [set_reference(name, sets.get(name)) for name in sets.names()]
    return "\n".join(sections)


def main() -> None:
    sys.stdout.write(reference_markdown())


if __name__ == "__main__":
    main()
