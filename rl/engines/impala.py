"""The IMPALA engine: N asynchronous Ray actors act, this process learns with V-trace.
Espeholt et al. 2018, "IMPALA: Scalable Distributed Deep-RL with Importance Weighted
Actor-Learner Architectures", https://arxiv.org/abs/1802.01561, section 3.

The learner takes the actors' unrolls (rl/workers/impala_actor.py) in arrival order while it
holds fewer than N (a finished actor waits meanwhile: backpressure); with N (num_envs env rows,
the single-process batch shape) it learns, V-trace correcting for the actors' older policies.
Acting and learning overlap and a slow actor delays nobody: that makes it IMPALA rather than the
lockstep env workers. Policy lag: the learner's weights version minus the unroll's.

Actors, evaluation, checkpoints and resume are rl/engines/ray_actors.py's. Unrolls in
flight at a stop are lost and episodes restart on resume: resume is not exact, and the run may
overshoot `train_steps` by one call's unrolls per actor.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rl.engines.base import Iteration
from rl.engines.ray_actors import IDLE_WAIT_SECONDS, RayActorsEngine
from rl.rollout import Rollout, concatenate
from rl.utils.logger import Sink
from rl.workers.impala_actor import ImpalaActor, actor_hparams
from rl.workers.progress import WorkerProgressCSV
from rl.workers.unrolls import add_unroll


def concatenate_unrolls(unrolls: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Actors' unrolls side by side along the env axis ([T, n, ...] each -> [T, sum n, ...])."""
    rollouts = [Rollout.from_batch(unroll) for unroll in unrolls]
    return concatenate(rollouts, axis="envs").numpy().as_batch()


class ImpalaEngine(RayActorsEngine):
    """One run (seed) as an IMPALA learner here with `num_workers` asynchronous actors."""

    actor_class = ImpalaActor

    def start(self, states: Sequence[dict]) -> None:
        self.pending: list[tuple[dict, int]] = []  # (unroll, weights version) not learned from yet
        self.lags: list[int] = []
        super().start(states)

    def restored_parts(self) -> str:
        return "learner"

    def progress_sink(self, path: str, resume_at_step: int) -> Sink | None:
        return WorkerProgressCSV(
            path,
            self.num_workers,
            resume_at_step,
            learner_columns={"policy_lag": "workers/policy_lag"},
        )

    def calls_in_flight(self) -> int:
        return 1  # of `workers.queue_blocks` + 1 unrolls (rl/workers/impala_actor.py)

    def start_line(self) -> str:
        n = self.num_workers
        actor = actor_hparams(self.hp, n)
        return (
            f"IMPALA: {n} actors x {actor.num_envs} env copies, unrolls "
            f"of {self.agent.unroll_length} steps; this learner learns from {n} unrolls at a time"
        )

    def iterate(self, active: Sequence[bool]) -> list[Iteration]:
        hp, agent, n = self.hp, self.agent, self.num_workers
        returns: list[float] = []
        lengths: list[float] = []
        # New unrolls only when there is no batch to learn from: backpressure (actors wait once
        # their calls are done) rather than a backlog here, whose unrolls would only age.
        for block in self.take(IDLE_WAIT_SECONDS) if len(self.pending) < n else []:
            if int(agent.env_steps.numpy()) >= hp.train_steps:
                break  # the budget is spent: drop the rest
            self.pending.extend((unroll, block["weights_version"]) for unroll in block["unrolls"])
            agent.env_steps.assign_add(block["env_steps"])
            self.stats.add(block)
            returns += block["episode_returns"]
            lengths += block["episode_lengths"]
        metrics: dict[str, float] = {}
        if len(self.pending) >= n:
            batch, self.pending = self.pending[:n], self.pending[n:]
            add_unroll(agent, concatenate_unrolls([unroll for unroll, _ in batch]))
            self.lags.extend(self.group.version - acted_with for _, acted_with in batch)
            metrics = agent.update()
            self.learned(metrics)
        steps = int(agent.env_steps.numpy())
        return [Iteration.from_episodes(steps, dict(metrics), returns, lengths)]

    def learner_metrics(self) -> dict[str, float]:
        if not self.lags:
            return {}
        lags, self.lags = self.lags, []
        return {"workers/policy_lag": float(np.mean(lags)), "workers/policy_lag_max": max(lags)}
