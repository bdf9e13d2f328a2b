"""Array-based sum tree (and min tree) with numpy-vectorized update and prefix-sum search.

Each tree level is one numpy operation over all queries (a K*B batch costs a few numpy calls per
level). Node 1 is the root, node i has children 2i and 2i+1, the L leaves are nodes L..2L-1.
Inner nodes are recomputed from their children, never updated by a delta: no drift, and saved
leaves rebuild the tree bit for bit. The min tree (unset leaves +inf) serves importance weights.
"""

from __future__ import annotations

import numpy as np


class SumTree:
    """Non-negative leaves; `find` maps prefix sums to leaves; `total` and `min` are O(1)."""

    def __init__(self, capacity: int) -> None:
        self._capacity = int(capacity)
        self._num_leaves = 1 << (self._capacity - 1).bit_length()
        self._depth = self._num_leaves.bit_length() - 1  # levels below the root
        # float64: sums of ~1e6 float32-sized priorities keep ~9 significant digits of headroom.
        self._sums = np.zeros(2 * self._num_leaves, dtype=np.float64)
        self._mins = np.full(2 * self._num_leaves, np.inf, dtype=np.float64)

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def total(self) -> float:
        return float(self._sums[1])

    @property
    def min(self) -> float:
        """Smallest value among leaves that have been set (+inf if none has)."""
        return float(self._mins[1])

    def get(self, indices: np.ndarray) -> np.ndarray:
        """Leaf values (float64) at `indices`, same shape."""
        indices = self._check_indices(indices)
        return self._sums[indices + self._num_leaves]

    def update(self, indices: np.ndarray, values: np.ndarray) -> None:
        """Sets leaves `indices` to `values` (same size; flattened); a repeated index keeps its
        last value, as if the writes were done one by one."""
        indices = self._check_indices(indices).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if indices.shape != values.shape:
            raise ValueError(f"update got {indices.size} indices but {values.size} values")
        if indices.size == 0:
            return
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            bad = values[~(np.isfinite(values) & (values >= 0))][:5]
            raise ValueError(f"sum tree values must be finite and >= 0, got e.g. {bad}")
        # The last write of each leaf, nodes sorted (parents dedupe by one comparison per level).
        nodes, first_in_reversed = np.unique(indices[::-1], return_index=True)
        values = values[::-1][first_in_reversed]
        nodes += self._num_leaves
        self._sums[nodes] = values
        self._mins[nodes] = values
        for _ in range(self._depth):
            nodes >>= 1
            if nodes.size > 1:
                nodes = nodes[np.concatenate(([True], nodes[1:] != nodes[:-1]))]
            left = nodes << 1
            right = left + 1
            self._sums[nodes] = self._sums[left] + self._sums[right]
            self._mins[nodes] = np.minimum(self._mins[left], self._mins[right])

    def find(self, prefix_sums: np.ndarray) -> np.ndarray:
        """Leaf i with cumsum[i-1] <= prefix < cumsum[i]. The descent never enters a zero-sum
        subtree, so a prefix at or past `total` (float rounding) lands on the last positive leaf,
        never an unused one."""
        prefix = np.array(prefix_sums, dtype=np.float64)  # a copy: it is reduced in place
        shape = prefix.shape
        prefix = prefix.reshape(-1)
        nodes = np.ones(prefix.shape, dtype=np.int64)
        for _ in range(self._depth):
            left = nodes << 1
            left_sum = self._sums[left]
            go_right = (prefix >= left_sum) & (self._sums[left + 1] > 0)
            go_right |= left_sum <= 0  # left subtree empty: nothing to find there
            prefix -= np.where(go_right, left_sum, 0.0)
            nodes = left + go_right
        return (nodes - self._num_leaves).reshape(shape)

    def _check_indices(self, indices: np.ndarray) -> np.ndarray:
        indices = np.asarray(indices, dtype=np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= self._capacity):
            raise ValueError(
                f"sum tree indices must be in [0, {self._capacity}), "
                f"got range [{indices.min()}, {indices.max()}]"
            )
        return indices
