"""What the Ape-X learner logs about its actors: env steps/s delivered, in total and per worker
(so an actor waiting on a full queue shows it), acting time, episodes, returns and epsilon, as
TensorBoard's `workers/<i>/...` and extra progress.csv columns.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from rl.utils.logger import CSVSink


class WorkerStats:
    """Per-worker counters between two `scalars` calls (and episode totals since start)."""

    def __init__(self, num_workers: int) -> None:
        self.num_workers = num_workers
        self.episodes = [0] * num_workers  # since this process started
        self._epsilon: list[float | None] = [None] * num_workers
        self._start_interval(time.monotonic())

    def _start_interval(self, now: float) -> None:
        self._since = now
        self._steps = [0] * self.num_workers
        self._acting_seconds = [0.0] * self.num_workers
        self._returns: list[list[float]] = [[] for _ in range(self.num_workers)]

    def add(self, block: Mapping[str, Any]) -> None:
        i = block["worker"]
        self._steps[i] += block["env_steps"]
        self._acting_seconds[i] += block["collect_seconds"]
        self._returns[i].extend(block["episode_returns"])
        self.episodes[i] += len(block["episode_returns"])
        if block["epsilon"] is not None:
            self._epsilon[i] = float(block["epsilon"])

    def scalars(self) -> dict[str, float]:
        """workers/<i>/... and the total steps/s since the last call; then starts afresh."""
        now = time.monotonic()
        elapsed = max(now - self._since, 1e-9)
        out: dict[str, float] = {"workers/steps_per_second": sum(self._steps) / elapsed}
        for i in range(self.num_workers):
            prefix = f"workers/{i}/"
            out[prefix + "steps_per_second"] = self._steps[i] / elapsed
            if self._acting_seconds[i] > 0:
                out[prefix + "acting_steps_per_second"] = self._steps[i] / self._acting_seconds[i]
            out[prefix + "episodes"] = float(self.episodes[i])
            if self._returns[i]:
                out[prefix + "episode_return"] = float(np.mean(self._returns[i]))
            if self._epsilon[i] is not None:
                out[prefix + "epsilon"] = self._epsilon[i]
        self._start_interval(now)
        return out


class WorkerProgressCSV(CSVSink):
    """progress.csv with throughput and per-worker columns after the usual ones."""

    def __init__(
        self,
        path: str,
        num_workers: int,
        resume_at_step: int | None = None,
        learner_columns: Mapping[str, str] | None = None,
    ) -> None:
        """`learner_columns`: {column: logged key}; Ape-X's replay size by default."""
        super().__init__(path, resume_at_step)
        self.extra = {
            "steps_per_second": "workers/steps_per_second",
            "updates_per_second": "time/updates_per_second",
            "actor_restarts": "workers/restarts",
            **(learner_columns or {"replay_size": "workers/replay_size"}),
        }
        for i in range(num_workers):
            for name in ("steps_per_second", "episodes", "epsilon"):
                self.extra[f"worker_{i}_{name}"] = f"workers/{i}/{name}"
        self.COLUMNS = (*CSVSink.COLUMNS, *self.extra)
        # Rows of an earlier run may have other worker columns: keep only this run's.
        self.rows = [{k: row.get(k) or "" for k in self.COLUMNS} for row in self.rows]

    def row(self, values: Mapping[str, float], step: int) -> dict[str, str]:
        row = super().row(values, step)
        for column, key in self.extra.items():
            row[column] = f"{values[key]:.6g}" if key in values else ""
        return row
