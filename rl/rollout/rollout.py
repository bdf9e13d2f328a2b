"""`Rollout`: T steps of N envs, time-major, as a value object new algorithms can work with.

Why a type and not a dict: every on-policy or trajectory-replay algorithm needs the same few
operations (cut, join, flatten, discount while telling terminations from truncations), and
getting the edges right once is the point (docs/rollout_api.md). Methods are TF ops, so it works
eagerly and inside a `tf.function`; fields are immutable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from rl.rollout.returns import episode_discounts, monte_carlo_returns

# Fields with a [T, N] lead; `last_next_obs` is [N, ...]; the last two may be None.
STEP_FIELDS = ("obs", "action", "reward", "terminated", "truncated", "final_obs")
OPTIONAL_FIELDS = ("log_prob", "value")


@dataclasses.dataclass(frozen=True)
class Rollout:
    """T vector-env steps of N envs (every field: docs/rollout_api.md)."""

    obs: Any
    action: Any
    reward: Any
    terminated: Any
    truncated: Any
    final_obs: Any
    last_next_obs: Any
    log_prob: Any = None
    value: Any = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_batch(cls, batch: Mapping[str, Any]) -> Rollout:
        """From a dict with the field names as keys, e.g. `RolloutBuffer.data()` (extra keys are
        ignored; `log_prob` and `value` may be missing)."""
        missing = [name for name in (*STEP_FIELDS, "last_next_obs") if name not in batch]
        if missing:
            raise KeyError(f"Rollout.from_batch: missing fields {missing}; got {sorted(batch)}")
        fields = {name: batch[name] for name in (*STEP_FIELDS, "last_next_obs")}
        fields.update({name: batch.get(name) for name in OPTIONAL_FIELDS})
        return cls(**fields)

    def as_batch(self) -> dict[str, Any]:
        """The fields as a dict (the `RolloutBuffer.data()` layout); None fields left out."""
        # Not `dataclasses.asdict`: it deep-copies every field, which graph tensors refuse.
        return {k: v for k, v in self._items() if v is not None}

    def replace(self, **changes: Any) -> Rollout:
        """A copy with some fields replaced (e.g. `log_prob` and `value` after `reevaluate`)."""
        return dataclasses.replace(self, **changes)

    def numpy(self) -> Rollout:
        """The same rollout with numpy arrays (for storage, printing, or `np.testing`)."""
        return Rollout(**{k: None if v is None else np.asarray(v) for k, v in self._items()})

    # ---------------------------------------------------------------------- shape
    @property
    def num_steps(self) -> int:
        """T (static)."""
        return int(self.reward.shape[0])

    @property
    def num_envs(self) -> int:
        """N (static)."""
        return int(self.reward.shape[1])

    def __len__(self) -> int:
        """Samples in the rollout, T * N."""
        return self.num_steps * self.num_envs

    # ------------------------------------------------------------------ cutting and joining
    def slice(self, start: int, stop: int) -> Rollout:
        """Steps [start, stop) of every env; the slice bootstraps from `obs[stop]` (or
        `last_next_obs`), which is a reset observation only where no bootstrap uses it."""
        start, stop, _ = slice(start, stop).indices(self.num_steps)
        if stop <= start:
            raise ValueError(f"Rollout.slice({start}, {stop}) of {self.num_steps} steps is empty")
        last = self.last_next_obs if stop == self.num_steps else self.obs[stop]
        fields = {k: None if v is None else v[start:stop] for k, v in self._step_items()}
        return Rollout(**fields, last_next_obs=last)

    def select_envs(self, indices: Sequence[int] | tf.Tensor) -> Rollout:
        """The env columns at `indices` (any order, repeats allowed), all T steps of each."""
        fields = {
            k: None if v is None else tf.gather(v, indices, axis=1) for k, v in self._step_items()
        }
        return Rollout(**fields, last_next_obs=tf.gather(self.last_next_obs, indices, axis=0))

    def batch_major(self) -> dict[str, tf.Tensor]:
        """The fields env axis first ([N, T, ...]): one trajectory segment per replay row
        (`from_batch_major` undoes it)."""
        out = {k: swap_lead_axes(v) for k, v in self._step_items() if v is not None}
        out["last_next_obs"] = tf.convert_to_tensor(self.last_next_obs)
        return out

    @classmethod
    def from_batch_major(cls, rows: Mapping[str, Any]) -> Rollout:
        """A rollout from [N, T, ...] rows (the inverse of `batch_major`)."""
        fields = {k: swap_lead_axes(v) for k, v in rows.items() if k != "last_next_obs"}
        return cls.from_batch({**fields, "last_next_obs": rows["last_next_obs"]})

    # ------------------------------------------------------------------ learning views
    def flatten(self) -> dict[str, tf.Tensor]:
        """Every per-step field as [T * N, ...] samples (row t * N + n is step t of env n), the
        layout minibatches are drawn from (`rl.rollout.minibatches`)."""
        return {k: flatten_steps(v) for k, v in self._step_items() if v is not None}

    def discounts(self, gamma: float) -> tf.Tensor:
        """[T, N]: gamma where the episode goes on after step t, 0 where it ended (either way)."""
        return episode_discounts(self.terminated, self.truncated, gamma)

    def monte_carlo_returns(
        self,
        gamma: float,
        final_values: tf.Tensor | None = None,
        bootstrap_value: tf.Tensor | None = None,
    ) -> tf.Tensor:
        """[T, N] discounted returns-to-go G_t that stop at every episode end (see
        `rl.rollout.returns.monte_carlo_returns` for the bootstrap options)."""
        return monte_carlo_returns(
            self.reward, self.terminated, self.truncated, gamma, final_values, bootstrap_value
        )

    # -------------------------------------------------------------------- internals
    def _items(self) -> list[tuple[str, Any]]:
        return [(f.name, getattr(self, f.name)) for f in dataclasses.fields(self)]

    def _step_items(self) -> list[tuple[str, Any]]:
        return [(k, v) for k, v in self._items() if k != "last_next_obs"]


def concatenate(rollouts: Sequence[Rollout], axis: str = "time") -> Rollout:
    """Joins rollouts along time (`axis="time"`: the second continues the first) or along envs
    (`axis="envs"`: more env columns of the same length)."""
    if not rollouts:
        raise ValueError("concatenate needs at least one rollout")
    if axis not in ("time", "envs"):
        raise ValueError(f"concatenate: axis must be 'time' or 'envs', got {axis!r}")
    step_axis = 0 if axis == "time" else 1
    fields: dict[str, Any] = {}
    for name in (*STEP_FIELDS, *OPTIONAL_FIELDS):
        parts = [getattr(r, name) for r in rollouts]
        present = [p is not None for p in parts]
        if any(present) and not all(present):
            raise ValueError(f"concatenate: {name!r} is None in some rollouts but not in others")
        fields[name] = tf.concat(parts, axis=step_axis) if all(present) else None
    if axis == "time":
        fields["last_next_obs"] = rollouts[-1].last_next_obs
    else:
        fields["last_next_obs"] = tf.concat([r.last_next_obs for r in rollouts], axis=0)
    return Rollout(**fields)


def flatten_steps(x: Any) -> tf.Tensor:
    """[T, N, ...] -> [T * N, ...] (row t * N + n is step t of env n)."""
    x = tf.convert_to_tensor(x)
    return tf.reshape(x, [x.shape[0] * x.shape[1], *x.shape[2:]])


def swap_lead_axes(x: Any) -> tf.Tensor:
    """Swaps the first two axes ([T, N, ...] <-> [N, T, ...]): e.g. time-major sequences made
    batch-major, the layout a distribution strategy splits along axis 0 (rl/distribute)."""
    x = tf.convert_to_tensor(x)
    return tf.transpose(x, [1, 0, *range(2, x.shape.rank)])
