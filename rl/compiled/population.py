"""A population: runs whose hparams differ only in numbers the program reads as tensors.

Why: a search on a TF-ops env (`python -m rl.tune --population N`) would otherwise trace and
compile one program per trial. Trials differing only in lr, ent_coef, gamma, ... share one
seed stack, each member reading its values from [S] variables (`HparamValues.read_from`,
`SeedStack.use_member_values`). A member trains exactly as a single run of its hparams
(tests/compiled/test_population.py) and its run dir resumes alone like any run.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from rl.errors import UserError
from rl.hparams import HParams

# The keys a population member may set to its own number (read while training, never a shape).
POPULATION_KEYS = (
    "lr",
    "clip_range",
    "ent_coef",
    "vf_coef",
    "gamma",
    "gae_lambda",
    "max_grad_norm",
)


def check_members(base: HParams, members: Sequence[HParams]) -> list[str]:
    """`varying_keys(members)`, after checking that every member differs from `base` (the
    hparams that decide the program) only in `POPULATION_KEYS`."""
    for member in members:
        _refuse_structural(base.differing_keys(member))
    return varying_keys(members)


def varying_keys(members: Sequence[HParams]) -> list[str]:
    """The keys whose values differ between members; UserError (one line) when a key outside
    `POPULATION_KEYS` differs, or a varying key is not a constant number in every member."""
    first = members[0]
    keys: list[str] = []
    for other in members[1:]:
        keys += [key for key in first.differing_keys(other) if key not in keys]
    _refuse_structural(keys)
    for key in keys:
        for hparams in members:
            number = hparams.constant_number(key)
            if number is None:
                raise UserError(
                    f"population key {key} must be a constant number in every member, got "
                    f"{getattr(hparams, key)!r}; give numbers, not schedules"
                )
            if key == "max_grad_norm" and number <= 0:
                raise UserError(
                    "a population that varies max_grad_norm needs it > 0 in every member "
                    f"(got {number}); members without clipping cannot share the clipped step"
                )
    return keys


def _refuse_structural(keys: Sequence[str]) -> None:
    structural = [key for key in keys if key not in POPULATION_KEYS]
    if structural:
        raise UserError(
            f"a population's members may differ only in {', '.join(POPULATION_KEYS)}; these "
            f"differ too: {', '.join(structural)} (tune them with --population 1, or leave "
            "them out of --keys)"
        )


class PopulationValues(tf.Module):
    """Each member's value of every varying key: one [S] float32 variable per key."""

    def __init__(self, members: Sequence[HParams]) -> None:
        super().__init__(name="population")
        self.keys = varying_keys(members)
        self.values = {
            key: tf.Variable(
                [hparams.constant_number(key) for hparams in members],
                dtype=tf.float32,
                trainable=False,
                name=f"population_{key}",
            )
            for key in self.keys
        }

    def reader(self, member: int):
        """What member `member`'s agent reads (`HparamValues.read_from`)."""

        def read(name: str) -> tf.Tensor | None:
            value = self.values.get(name)
            return None if value is None else value[member]

        return read

    def get(self, key: str) -> tf.Variable | None:
        """The [S] values of `key`, or None when the members share the set's value."""
        return self.values.get(key)

    def per_column(self, key: str, columns_per_member: int) -> tf.Tensor | None:
        """[S * C] values for member-major env columns; None when the members share the value."""
        value = self.values.get(key)
        if value is None:
            return None
        return tf.repeat(value, columns_per_member)
