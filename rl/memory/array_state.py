"""Loading a memory's fixed-shape numpy arrays back from a checkpoint, by name: a checkpoint of
another shape or dtype is refused before anything is overwritten, so a failed load leaves the
memory as it was. A part's arrays sit under a key prefix in its owner's state.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def with_prefix(prefix: str, state: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {prefix + key: value for key, value in state.items()}


def under_prefix(prefix: str, state: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The entries of `state` whose key starts with `prefix`, the prefix removed."""
    return {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}


def load_arrays(
    arrays: Mapping[str, np.ndarray], state: Mapping[str, np.ndarray], what: str
) -> None:
    """Copies `state[name]` into each of `arrays` in place once every one has been checked to
    have the same shape and dtype; `what` names the memory in the error."""
    for name, ours in arrays.items():
        saved = np.asarray(state[name])
        if saved.shape != ours.shape or saved.dtype != ours.dtype:
            raise ValueError(
                f"checkpoint {what} {name!r} is {saved.dtype}{list(saved.shape)}, "
                f"expected {ours.dtype}{list(ours.shape)}"
            )
    for name, ours in arrays.items():
        ours[...] = state[name]
