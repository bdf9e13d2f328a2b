"""Proportional prioritized experience replay.

Schaul, Quan, Antonoglou & Silver, "Prioritized Experience Replay", 2015,
https://arxiv.org/abs/1511.05952.

Importance weights are divided by the largest possible weight (as OpenAI baselines does), so
they only scale updates down. Draws are stratified (Appendix B.2.1), then shuffled before being
cut into K batches (else batch 0 would hold only the low prefix sums). New rows get the largest
priority so far. When alpha/epsilon change (schedules), stored rows keep theirs until replayed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rl.memory.ring_storage import FieldSpec, RingStorage
from rl.memory.sum_tree import SumTree
from rl.memory.uniform import Replay
from rl.registry import register_memory


def check_alpha_epsilon(alpha: float, epsilon: float) -> None:
    if alpha < 0 or epsilon < 0:
        raise ValueError(f"alpha and epsilon must be >= 0, got {alpha} and {epsilon}")


class PrioritizedSampler:
    """Proportional sampling through a `SumTree` over the stored priorities (p + eps)^alpha."""

    name = "prioritized"

    def __init__(self, capacity: int, alpha: float, epsilon: float) -> None:
        check_alpha_epsilon(alpha, epsilon)
        self.tree = SumTree(capacity)
        self.alpha = float(alpha)
        self.epsilon = float(epsilon)
        # Largest stored priority (p + eps)^alpha seen so far; given to new rows.
        self.max_priority = 1.0

    def _stored(self, priorities: np.ndarray) -> np.ndarray:
        if not np.all(np.isfinite(priorities)):
            raise ValueError("priorities must be finite (got NaN or inf; check the TD errors)")
        stored = (np.abs(priorities) + self.epsilon) ** self.alpha
        if self.epsilon == 0 and self.alpha > 0 and np.any(stored == 0):
            # A zero priority would never be drawn again and would zero every IS weight.
            raise ValueError("priority 0 with epsilon=0 is not allowed; use epsilon > 0")
        if stored.size:
            self.max_priority = max(self.max_priority, float(stored.max()))
        return stored

    def on_add(self, indices: np.ndarray, priorities: np.ndarray | None) -> None:
        if priorities is None:
            stored = np.full(indices.shape, self.max_priority)
        else:
            stored = self._stored(priorities)
        self.tree.update(indices, stored)

    def sample(
        self, rng: np.random.Generator, size: int, shape: tuple[int, int], beta: float
    ) -> tuple[np.ndarray, np.ndarray]:
        count = shape[0] * shape[1]
        prefix = (np.arange(count) + rng.random(count)) * (self.tree.total / count)
        prefix = prefix[rng.permutation(count)]
        indices = self.tree.find(prefix)
        # P(i) / P_min = p_i / p_min, so (N P(i))^-beta / (N P_min)^-beta = (p_i / p_min)^-beta.
        weights = (self.tree.get(indices) / self.tree.min) ** (-beta)
        return indices.reshape(shape), weights.astype(np.float32).reshape(shape)

    def update_priorities(
        self,
        indices: np.ndarray,
        priorities: np.ndarray,
        size: int,
        alpha: float | None = None,
        epsilon: float | None = None,
    ) -> None:
        alpha = self.alpha if alpha is None else float(alpha)
        epsilon = self.epsilon if epsilon is None else float(epsilon)
        check_alpha_epsilon(alpha, epsilon)
        self.alpha, self.epsilon = alpha, epsilon
        if indices.size and (indices.min() < 0 or indices.max() >= size):
            raise ValueError(
                f"update_priorities indices must be in [0, {size}), "
                f"got range [{indices.min()}, {indices.max()}]"
            )
        self.tree.update(indices, self._stored(priorities))

    def state_dict(self, size: int) -> dict[str, np.ndarray]:
        return {
            "priorities": self.tree.get(np.arange(size)),
            "max_priority": np.array(self.max_priority, dtype=np.float64),
            "alpha": np.array(self.alpha, dtype=np.float64),
            "epsilon": np.array(self.epsilon, dtype=np.float64),
        }

    def load_state_dict(self, state: Mapping[str, np.ndarray], size: int) -> None:
        # The exponent and floor the stored priorities were last made with (schedules).
        self.alpha, self.epsilon = float(state["alpha"]), float(state["epsilon"])
        priorities = np.asarray(state["priorities"], dtype=np.float64)
        if priorities.shape != (size,):
            raise ValueError(f"checkpoint has {priorities.size} priorities for {size} rows")
        # Inner nodes are a pure function of the leaves, so rebuilding restores the exact tree.
        self.tree = SumTree(self.tree.capacity)
        self.tree.update(np.arange(size), priorities)
        self.max_priority = float(state["max_priority"])


@register_memory("prioritized")
class PrioritizedReplay(Replay):
    """Proportional prioritized replay (Schaul et al. 2015) over a preallocated ring."""

    def __init__(
        self, capacity: int, fields: FieldSpec, seed: int, alpha: float = 0.6, epsilon: float = 1e-6
    ) -> None:
        self._prioritized = PrioritizedSampler(capacity, alpha, epsilon)
        super().__init__(RingStorage(capacity, fields), self._prioritized, seed)

    @property
    def alpha(self) -> float:
        return self._prioritized.alpha

    @property
    def epsilon(self) -> float:
        return self._prioritized.epsilon

    @property
    def max_priority(self) -> float:
        """Largest stored priority (p + epsilon)^alpha seen so far: what new rows get."""
        return self._prioritized.max_priority

    def get_priorities(self, indices: np.ndarray) -> np.ndarray:
        """Stored priorities (p + epsilon)^alpha (float64) of rows `indices`, same shape."""
        indices = np.asarray(indices, dtype=np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= self.size):
            raise ValueError(f"indices must be in [0, {self.size})")
        return self._prioritized.tree.get(indices)
