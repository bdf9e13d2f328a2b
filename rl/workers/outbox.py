"""An Ape-X actor's outbox, installed as its agent's `replay`: actors produce n-step transitions,
the learner owns the replay (Horgan et al. 2018, https://arxiv.org/abs/1803.00933).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


class Outbox:
    """Collects `add_batch` calls; `drain` returns them as one batch (None when empty)."""

    def __init__(self) -> None:
        self._parts: list[dict[str, np.ndarray]] = []

    def add_batch(self, batch: Mapping[str, np.ndarray], priorities: np.ndarray | None = None):
        """As a replay's `add_batch`; priorities are the learner's business (None here)."""
        del priorities
        self._parts.append({key: np.asarray(value) for key, value in batch.items()})

    def __len__(self) -> int:
        return sum(len(part["reward"]) for part in self._parts)

    def drain(self) -> dict[str, np.ndarray] | None:
        if not self._parts:
            return None
        parts, self._parts = self._parts, []
        return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
