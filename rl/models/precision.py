"""The `precision` hparam: which dtype the networks compute in (Keras mixed precision).

With mixed_bfloat16 / mixed_float16 the torsos and recurrent cores compute in the low dtype;
variables and heads stay float32, so distributions, targets and losses are float32 (float16 also
needs loss scaling: `rl.agents.optimizers`). Set per layer of the built models, not process-wide
(agents with different settings share a process; Keras 3 layers do not inherit the policy).
"""

from __future__ import annotations

from collections.abc import Iterable

import tensorflow as tf

from rl.errors import UserError, did_you_mean
from rl.models.encoders import AutoTorso
from rl.models.recurrent import RecurrentCore
from rl.utils import private_apis

PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
# The layer types that hold a network's body (registered torsos are Sequential or AutoTorso).
BODY_TYPES = (AutoTorso, tf.keras.Sequential, RecurrentCore)


def check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise UserError(
            f"unknown precision {precision!r}{did_you_mean(precision, PRECISIONS)}; choose one "
            f"of {', '.join(PRECISIONS)}"
        )


def check_agent_precision(
    precision: str, agent: str, refusal: str | None, distributed: bool, compiled: bool
) -> None:
    """UserError for a `precision` that agent `agent` cannot train in (`refusal`: why it cannot
    compute below float32, None when it can), before anything is built: mixed_float16's loss
    scaling exists only on one device outside the compiled path."""
    check_precision(precision)
    if precision == "float32":
        return
    if refusal:
        raise UserError(f"agent {agent!r}: {refusal}")
    if precision == "mixed_float16" and (distributed or compiled):
        raise UserError(
            f"precision=mixed_float16 needs loss scaling, which agent {agent!r} has only on "
            "one device outside the compiled path (not under --strategy, not on a tf/ env); "
            "use precision=mixed_bfloat16 (float32's range: no loss scaling needed)"
        )


def compute_in(precision: str, models: Iterable[tf.keras.layers.Layer]) -> None:
    """Sets `precision`'s dtype policy on every layer of the bodies (torsos, recurrent cores)
    of the built `models`; heads keep float32. float32 leaves every layer as it is."""
    check_precision(precision)
    if precision == "float32":
        return
    for model in models:
        for body in private_apis.nested_layers(model, include_self=True):
            if isinstance(body, BODY_TYPES):
                for layer in private_apis.nested_layers(body, include_self=True):
                    layer.dtype_policy = precision
