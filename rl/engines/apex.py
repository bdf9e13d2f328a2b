"""The Ape-X engine: N Ray actors act, this process learns (`--num_workers N > 1`, replay agents).
Horgan et al. 2018, "Distributed Prioritized Experience Replay", https://arxiv.org/abs/1803.00933.

Actors (rl/workers/apex_actor.py) send blocks of n-step transitions with actor-side priorities;
the learner adds them to its replay and updates whenever the replay ratio allows
(`workers.rate_limit`; off: as fast as it can, as in the paper). The actors, weights, evaluation
and logging are rl/engines/ray_actors.py's.

Resume restores the learner and its replay and starts fresh actors (seeds derived from the number
of starts). It is not exact: what actors collect depends on process timing, and their partial
episodes are not saved. A run may overshoot `train_steps` by one block per actor.
"""

from __future__ import annotations

from collections.abc import Sequence

from rl.engines.base import Iteration
from rl.engines.ray_actors import IDLE_WAIT_SECONDS, RayActorsEngine
from rl.utils.logger import Sink
from rl.workers.apex_actor import ApexActor
from rl.workers.exploration import actor_epsilon
from rl.workers.progress import WorkerProgressCSV


class ApexEngine(RayActorsEngine):
    """One run (seed) as a replay learner here with `num_workers` Ray actors."""

    actor_class = ApexActor

    def restored_parts(self) -> str:
        return f"learner and replay of {len(self.agent.replay):,} transitions"

    def progress_sink(self, path: str, resume_at_step: int) -> Sink | None:
        return WorkerProgressCSV(path, self.num_workers, resume_at_step)

    def calls_in_flight(self) -> int:
        """Per actor: the blocks that may wait for the learner + the one being collected."""
        return self.hp.workers.queue_blocks + 1

    def start_line(self) -> str:
        n = self.num_workers
        epsilons = [actor_epsilon(self.hp, i, n) for i in range(n)]
        exploration = "the agent's own exploration"
        if epsilons[0] is not None:
            exploration = "epsilons " + ", ".join(f"{e:.3g}" for e in epsilons)
        return f"Ape-X: {n} actors ({exploration}) and this learner"

    def iterate(self, active: Sequence[bool]) -> list[Iteration]:
        hp, agent = self.hp, self.agent
        metrics: dict[str, float] = {}
        if self._may_update():
            metrics = agent.update()  # {} while the replay is too small
            if metrics:
                self.learned(metrics)
        returns: list[float] = []
        lengths: list[float] = []
        # Rate-limited, the learner takes new data only once it has learned from the old
        # (actors wait on the full queue meanwhile); otherwise it takes what is there.
        if not metrics or not hp.workers.rate_limit:
            timeout = 0.0 if metrics else IDLE_WAIT_SECONDS
            for block in self.take(timeout):
                if int(agent.env_steps.numpy()) >= hp.train_steps:
                    break  # the budget is spent: drop the rest
                if block["transitions"] is not None:  # n-step transitions, actor priorities
                    agent.replay.add_batch(block["transitions"], block["priorities"])
                agent.env_steps.assign_add(block["env_steps"])
                self.stats.add(block)
                returns += block["episode_returns"]
                lengths += block["episode_lengths"]
        steps = int(agent.env_steps.numpy())
        return [Iteration.from_episodes(steps, dict(metrics), returns, lengths)]

    def _may_update(self) -> bool:
        """One update per train_every env steps from learning_starts on (the set's ratio)."""
        hp = self.hp
        if not hp.workers.rate_limit:
            return True
        learning_steps = self.state["env_steps"] - hp.learning_starts
        return learning_steps >= 0 and self.state["updates"] <= learning_steps // hp.train_every

    def learner_metrics(self) -> dict[str, float]:
        return {"workers/replay_size": len(self.agent.replay)}
