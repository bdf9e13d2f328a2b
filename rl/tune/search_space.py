"""What a hyper-parameter search may change: a `SearchSpace` of `Param`s over hparams keys.

A space is data (no Optuna here). A sampled value reaches the hparams as `--hparam_override`
text, so it goes through the command line's typed parsing, and `check_against` tries every bound
and choice on the set before a study starts: a space that does not fit is a one-line `UserError`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rl.errors import UserError
from rl.hparams.hparams import HParams
from rl.hparams.override_parser import override_text

KINDS = ("float", "int", "categorical")


@dataclass(frozen=True)
class Param:
    """One hparams key and its range: `low`..`high` (float/int, `log` for log-uniform) or
    `choices` (categorical: numbers, bools, or override texts such as schedules)."""

    key: str
    kind: str
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple[Any, ...] = ()

    def check(self) -> None:
        """UserError for a range that cannot be sampled."""
        where = f"search space key {self.key}"
        if self.kind not in KINDS:
            raise UserError(f"{where}: kind must be one of {KINDS}")
        if self.kind == "categorical":
            if not self.choices:
                raise UserError(f"{where}: categorical needs choices")
            return
        if self.low is None or self.high is None or not self.low < self.high:
            raise UserError(f"{where}: needs low < high, got {self.low}..{self.high}")
        if self.log and self.low <= 0:
            raise UserError(f"{where}: a log range needs low > 0, got {self.low}")
        if not all(map(math.isfinite, (self.low, self.high))):
            raise UserError(f"{where}: low and high must be finite")

    def examples(self) -> list[Any]:
        """The values `check_against` tries on the set: both bounds, or every choice."""
        if self.kind == "categorical":
            return list(self.choices)
        number = int if self.kind == "int" else float
        return [number(self.low), number(self.high)]


@dataclass(frozen=True)
class SearchSpace:
    """A named set of `Param`s with a one-line description of why these keys."""

    name: str
    description: str
    params: tuple[Param, ...] = field(default_factory=tuple)

    def keys(self) -> list[str]:
        return [param.key for param in self.params]

    def restricted(self, keys: Sequence[str]) -> SearchSpace:
        """Only `keys` (a `--keys` subset); UserError for a key the space lacks."""
        for key in keys:
            if key not in self.keys():
                raise UserError(
                    f"search space {self.name!r} has no key {key!r}; its keys: "
                    f"{', '.join(self.keys())}"
                )
        kept = tuple(param for param in self.params if param.key in keys)
        return SearchSpace(self.name, self.description, kept)

    def check_against(self, hparams: HParams, set_name: str) -> None:
        """UserError (one line, naming key and fix) unless every key is declared in the set and
        every bound and choice passes the key's typed override parsing."""
        for param in self.params:
            param.check()
            if param.key not in hparams:
                raise UserError(
                    f"search space {self.name!r} tunes {param.key!r}, which hparams set "
                    f"{set_name!r} does not declare; pick a space for this set (train.py --list)"
                )
            for value in param.examples():
                try:
                    hparams.copy().override(override_text({param.key: value}))
                except UserError as error:
                    raise UserError(
                        f"search space {self.name!r}: {param.key}={value!r} does not fit the "
                        f"declared type {hparams.type_name(param.key)} ({error})"
                    ) from None
