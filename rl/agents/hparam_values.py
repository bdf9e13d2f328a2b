"""What an agent reads as an hparam at a step: the set's number or schedule, or a population
member's tensor.

A population trains members that differ only in some numbers (lr, ent_coef, gamma, ...) in one
traced program (rl/compiled/population.py): each member's agent reads those numbers from tensors
instead of its set (`read_from`), and a loss called for one member passes that member's tensors
(`member`). Acting and learning read through the same object, so a schedule of the env step
(exploration noise) and one of the gradient step (a clip range) follow the same rule.
"""

from __future__ import annotations

import tensorflow as tf

from rl.hparams import HParams, as_schedule
from rl.types import HparamTensors


class HparamValues:
    """`at` (always a tensor) and `now` (constants stay Python numbers) of an agent's hparams."""

    def __init__(self, hparams: HParams) -> None:
        self.hparams = hparams
        self._tensors: HparamTensors = _from_the_set

    def read_from(self, tensors: HparamTensors) -> None:
        """From now on, hparam `name` is `tensors(name)` wherever that is not None: one trace
        serves population members that differ only in those numbers."""
        self._tensors = tensors

    def at(
        self, name: str, step: tf.Tensor | tf.Variable, member: HparamTensors | None = None
    ) -> tf.Tensor:
        """Hparam `name` (a number or a schedule) at `step`, as float32 (TF code). `member`: a
        population member's tensors, read instead of this agent's own (`read_from`)."""
        tensor = (member or self._tensors)(name)
        return as_schedule(getattr(self.hparams, name))(step) if tensor is None else tensor

    def now(
        self, name: str, step: tf.Tensor | tf.Variable, member: HparamTensors | None = None
    ) -> float | tf.Tensor | None:
        """Hparam `name` at `step`: constants stay Python floats (baked into the graph), None
        stays None, a schedule is a tensor. `member` as in `at`."""
        tensor = (member or self._tensors)(name)
        if tensor is not None:
            return tensor
        value = getattr(self.hparams, name)
        if value is None:
            return None
        schedule = as_schedule(value)
        if schedule.name == "constant":
            return float(schedule.args["value"])
        return schedule(step)


def _from_the_set(name: str) -> None:
    """Every hparam comes from the set (until `HparamValues.read_from`)."""
    return None
