"""Hyper-parameters that change with the training step (epsilon, learning rate, beta, ...).

A `Schedule` uses TF ops only, so it runs inside a `tf.function` driven by an int64 step
variable without retracing. Step arithmetic that decides a boundary is done in int64, so it
stays exact at billions of steps. A schedule is data: `spec()` is a canonical string such as
`"linear(1.0, 0.05, 10000)"` that `parse_schedule` reads back into an equal schedule, which is
how schedules travel through `--hparam_override` and `hparams.json`.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import tensorflow as tf

from rl import registry
from rl.errors import UserError
from rl.hparams.override_parser import LiteralError, parse_literal


class Schedule:
    """A float-valued function of the training step built from TF ops. Subclasses set `name`, call
    `super().__init__(**args)` with their validated arguments in signature order, list optional ones
    in `optional`, and implement `_value(step)`."""

    name: ClassVar[str] = ""
    optional: ClassVar[Mapping[str, Any]] = MappingProxyType({})

    def __init__(self, **args: Any) -> None:
        self.args: Mapping[str, Any] = MappingProxyType(dict(args))  # in signature order

    def __call__(self, step: Any) -> tf.Tensor:
        """Returns the value at `step` (int tensor, tf.Variable or Python int) as float32."""
        return self._value(tf.cast(tf.convert_to_tensor(step), tf.int64))

    def _value(self, step: tf.Tensor) -> tf.Tensor:
        raise NotImplementedError

    def value_range(self) -> tuple[float, float]:
        """(lowest, highest) value over all steps >= 0, limits included (a decay toward 0
        reaches 0 in float32): what a key's check (`kappa > 0`, ...) must hold for."""
        raise NotImplementedError

    def value(self, step: int) -> float:
        """Python convenience (eager only): the value at `step` as a float."""
        return float(self(step).numpy())

    def spec(self) -> str:
        """Canonical text, e.g. `linear(1.0, 0.05, 10000)`; optional args only when not default."""
        parts = []  # the validated arguments are numbers and lists, which repr() writes as text
        for arg, value in self.args.items():
            if arg not in self.optional:
                parts.append(repr(value))
            elif value != self.optional[arg]:
                parts.append(f"{arg}={value!r}")
        return f"{self.name}({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schedule) and self.spec() == other.spec()

    def __hash__(self) -> int:
        return hash(self.spec())

    def __repr__(self) -> str:
        return self.spec()


# --- argument checks: a bad argument is a UserError naming the schedule and the argument ---


def _number(schedule: str, arg: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise UserError(f"{schedule}: {arg} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise UserError(f"{schedule}: {arg} must be finite, got {value!r}")
    return float(value)


def _count(schedule: str, arg: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise UserError(f"{schedule}: {arg} must be an int, got {value!r}")
    if value < minimum:
        raise UserError(f"{schedule}: {arg} must be >= {minimum}, got {value!r}")
    return int(value)


def _sequence(schedule: str, arg: str, value: Any) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise UserError(f"{schedule}: {arg} must be a list, got {value!r}")
    return list(value)


class Constant(Schedule):
    """`constant(value)`: the same value at every step."""

    name = "constant"

    def __init__(self, value: float) -> None:
        super().__init__(value=_number(self.name, "value", value))

    def _value(self, step: tf.Tensor) -> tf.Tensor:
        del step
        return tf.constant(self.args["value"], tf.float32)

    def value_range(self) -> tuple[float, float]:
        return self.args["value"], self.args["value"]


class Linear(Schedule):
    """`linear(start, end, steps, begin=0)`: start until `begin`, then linearly to `end` over
    `steps` steps, then `end` forever."""

    name = "linear"
    optional = MappingProxyType({"begin": 0})

    def __init__(self, start: float, end: float, steps: int, begin: int = 0) -> None:
        super().__init__(
            start=_number(self.name, "start", start),
            end=_number(self.name, "end", end),
            steps=_count(self.name, "steps", steps, minimum=1),
            begin=_count(self.name, "begin", begin, minimum=0),
        )

    def _value(self, step: tf.Tensor) -> tf.Tensor:
        a = self.args
        done = tf.clip_by_value(step - a["begin"], 0, a["steps"])
        frac = tf.cast(done, tf.float32) / float(a["steps"])
        # start*(1-frac) + end*frac hits both endpoints exactly.
        return a["start"] * (1.0 - frac) + a["end"] * frac

    def value_range(self) -> tuple[float, float]:
        return _ends(self.args["start"], self.args["end"])


class Exponential(Schedule):
    """`exponential(start, decay_rate, decay_steps, minimum=0.0)`:
    `max(start * decay_rate ** (step / decay_steps), minimum)`."""

    name = "exponential"
    optional = MappingProxyType({"minimum": 0.0})

    def __init__(
        self, start: float, decay_rate: float, decay_steps: int, minimum: float = 0.0
    ) -> None:
        rate = _number(self.name, "decay_rate", decay_rate)
        if rate <= 0:
            raise UserError(f"{self.name}: decay_rate must be > 0, got {decay_rate!r}")
        super().__init__(
            start=_number(self.name, "start", start),
            decay_rate=rate,
            decay_steps=_count(self.name, "decay_steps", decay_steps, minimum=1),
            minimum=_number(self.name, "minimum", minimum),
        )

    def _value(self, step: tf.Tensor) -> tf.Tensor:
        a = self.args
        exponent = tf.cast(step, tf.float32) / float(a["decay_steps"])
        decayed = a["start"] * tf.pow(tf.constant(a["decay_rate"], tf.float32), exponent)
        return tf.maximum(decayed, a["minimum"])

    def value_range(self) -> tuple[float, float]:
        start, rate, minimum = self.args["start"], self.args["decay_rate"], self.args["minimum"]
        # start * rate^x for x >= 0 runs from start toward 0 (rate < 1) or +-inf (rate > 1).
        limit = 0.0 if rate < 1 else start if rate == 1 or start == 0 else start * math.inf
        low, high = _ends(start, limit)
        return max(low, minimum), max(high, minimum)


class Piecewise(Schedule):
    """`piecewise(boundaries, values)`: `values[i]` for `boundaries[i-1] <= step < boundaries[i]`
    (so `values[0]` before the first boundary and `values[-1]` from the last one on)."""

    name = "piecewise"

    def __init__(self, boundaries: list[int], values: list[float]) -> None:
        bounds = [
            _count(self.name, f"boundaries[{i}]", b, minimum=0)
            for i, b in enumerate(_sequence(self.name, "boundaries", boundaries))
        ]
        vals = [
            _number(self.name, f"values[{i}]", v)
            for i, v in enumerate(_sequence(self.name, "values", values))
        ]
        if any(b >= c for b, c in itertools.pairwise(bounds)):
            raise UserError(f"{self.name}: boundaries must increase strictly, got {bounds}")
        if len(vals) != len(bounds) + 1:
            raise UserError(
                f"{self.name}: values needs len(boundaries) + 1 = {len(bounds) + 1} entries, "
                f"got {len(vals)}"
            )
        super().__init__(boundaries=bounds, values=vals)

    def _value(self, step: tf.Tensor) -> tf.Tensor:
        bounds = tf.constant(
            self.args["boundaries"], tf.int64, shape=[len(self.args["values"]) - 1]
        )
        index = tf.reduce_sum(tf.cast(step >= bounds, tf.int32))
        return tf.gather(tf.constant(self.args["values"], tf.float32), index)

    def value_range(self) -> tuple[float, float]:
        return min(self.args["values"]), max(self.args["values"])


class Cosine(Schedule):
    """`cosine(start, end, steps)`: half a cosine from `start` to `end` over `steps`, then `end`
    (SGDR without restarts, Loshchilov & Hutter 2016, https://arxiv.org/abs/1608.03983)."""

    name = "cosine"

    def __init__(self, start: float, end: float, steps: int) -> None:
        super().__init__(
            start=_number(self.name, "start", start),
            end=_number(self.name, "end", end),
            steps=_count(self.name, "steps", steps, minimum=1),
        )

    def _value(self, step: tf.Tensor) -> tf.Tensor:
        a = self.args
        done = tf.clip_by_value(step, 0, a["steps"])
        frac = tf.cast(done, tf.float32) / float(a["steps"])
        weight = 0.5 * (1.0 + tf.cos(math.pi * frac))  # 1 at the start, 0 at the end
        return a["start"] * weight + a["end"] * (1.0 - weight)

    def value_range(self) -> tuple[float, float]:
        return _ends(self.args["start"], self.args["end"])


def _ends(a: float, b: float) -> tuple[float, float]:
    return min(a, b), max(a, b)


for _cls in (Constant, Linear, Exponential, Piecewise, Cosine):
    registry.register_schedule(_cls.name, _cls)


def parse_schedule(text: str) -> Schedule:
    """Reads a schedule from text: a registered call (`linear(1.0, 0.05, 10000)`) or a number."""
    try:
        value = parse_literal(text)
    except LiteralError:
        value = None
    if isinstance(value, Schedule):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Constant(value)
    raise UserError(
        f"not a schedule: {text!r} (expected a number or a call such as "
        f"linear(1.0, 0.05, 10000); registered: {', '.join(registry.schedules.names())})"
    )


def as_schedule(value: Schedule | float | str) -> Schedule:
    """A number becomes `constant(value)`, a Schedule stays itself, a str is parsed."""
    if isinstance(value, Schedule):
        return value
    if isinstance(value, str):
        return parse_schedule(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return Constant(value)
    raise UserError(f"not a schedule: {value!r} (expected a number, a Schedule or a string)")
