"""The Ape-X engine: N Ray actors act, this process learns (`--num_workers N > 1`, replay agents).
Horgan et al. 2018, "Distributed Prioritized Experience Replay", https://arxiv.org/abs/1803.00933.

Actors (rl/workers/apex_actor.py) send blocks of n-step transitions with actor-side priorities;
the learner adds them to its replay and updates whenever the replay ratio allows
(`workers.rate_limit`; off: as fast as it can, as in the paper).

Resume restores the learner and its replay and starts fresh actors (seeds derived from the number
of starts). It is not exact: what actors collect depends on process timing, and their partial
episodes are not saved. A run may overshoot `train_steps` by one block per actor.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from rl.engines.base import EvalRequest, Iteration, OneAgentEngine
from rl.engines.in_process import build_agent
from rl.envs import make_vector_env
from rl.evaluation import EvalResult
from rl.hparams import HParams
from rl.utils.files import join
from rl.utils.logger import Sink
from rl.utils.seeding import derive_seed
from rl.workers.actor_group import ActorGroup
from rl.workers.apex_actor import ApexActor
from rl.workers.exploration import actor_epsilon
from rl.workers.progress import WorkerProgressCSV, WorkerStats
from rl.workers.waiting import DEFAULT_ACTOR_WAIT_SECONDS
from rl.workers.weights import PolicyWeights

IDLE_WAIT_SECONDS = 0.1  # how long the learner waits for blocks when it may not update


class ApexEngine(OneAgentEngine):
    """One run (seed) as a learner here with `num_workers` Ray actors."""

    extra_state = {"updates": 0, "worker_starts": 0, "actor_restarts": 0}
    actor_class: type = ApexActor

    def __init__(
        self,
        hparams: HParams,
        run,
        num_workers: int,
        ray_address: str | None = None,
        actor_resources: dict[str, float] | None = None,
        max_actor_restarts: int = 3,
        actor_wait_timeout: float = DEFAULT_ACTOR_WAIT_SECONDS,
    ) -> None:
        """`actor_resources`: what an actor needs besides one CPU; restarts count per actor;
        `actor_wait_timeout`: seconds without a node for the actors before the run checkpoints
        and exits (rl/workers/waiting.py)."""
        hp = self.hp = hparams
        self.seed = run.seed
        self.label = run.label
        self.num_workers = num_workers
        self.ray_address, self.actor_resources = ray_address, actor_resources
        self.max_actor_restarts = max_actor_restarts
        self.actor_wait_timeout = actor_wait_timeout
        self.traceback_dir = join(run.run_dir, "workers")
        # The learner acts only in evaluation; this env only describes the training envs.
        probe_env, spec = make_vector_env(
            hp.env, hp.num_envs, 0, env_kwargs=hp.env_kwargs, max_episode_steps=hp.max_episode_steps
        )
        probe_env.close()
        self.open_eval_env()
        self.agent = build_agent(hp, spec, self.seed)
        self.checkpoint = tf.train.Checkpoint(agent=self.agent)
        self.policy = PolicyWeights(self.agent)
        self.stats = WorkerStats(num_workers)
        self.group: ActorGroup | None = None
        self.state: dict[str, Any] = {}
        self._rate_start, self._rate_updates = time.monotonic(), 0

    # ----------------------------------------------------------------- what subclasses vary
    def restored_parts(self) -> str:
        """What a resume restored, for its console line (IMPALA's learner has no replay)."""
        return f"learner and replay of {len(self.agent.replay):,} transitions"

    def progress_sink(self, path: str, resume_at_step: int) -> Sink | None:
        return WorkerProgressCSV(path, self.num_workers, resume_at_step)

    def calls_in_flight(self) -> int:
        """Per actor: the blocks that may wait for the learner + the one being collected."""
        return self.hp.workers.queue_blocks + 1

    def actor_group(self, starts: int) -> ActorGroup:
        n = self.num_workers
        return ActorGroup(
            self.actor_class,
            n,
            self.hp.to_json(),
            seeds=[
                (
                    derive_seed(self.seed, "actor_env", i, starts),
                    derive_seed(self.seed, "actor_agent", i, starts),
                )
                for i in range(n)
            ],
            depth=self.calls_in_flight(),
            max_restarts=self.max_actor_restarts,
            address=self.ray_address,
            resources=self.actor_resources,
            traceback_dir=self.traceback_dir,
            label=self.label,
            wait_timeout=self.actor_wait_timeout,
        )

    def start_line(self) -> str:
        n = self.num_workers
        epsilons = [actor_epsilon(self.hp, i, n) for i in range(n)]
        exploration = "the agent's own exploration"
        if epsilons[0] is not None:
            exploration = "epsilons " + ", ".join(f"{e:.3g}" for e in epsilons)
        return f"Ape-X: {n} actors ({exploration}) and this learner"

    # -------------------------------------------------------------------------- protocol
    def weights(self) -> list[np.ndarray]:
        return [self.policy.read()]  # one flat array (rl/workers/weights.py)

    def resume_note(self, index: int) -> str:
        return f" ({self.restored_parts()}; fresh actors)"

    def manifest_extras(self) -> dict[str, Any]:
        return {"num_workers": self.num_workers}

    def start(self, states: Sequence[dict[str, Any]]) -> None:
        (self.state,) = states
        starts = self.state["worker_starts"]
        self.state["worker_starts"] += 1
        print(f"[{self.label}] {self.start_line()}")
        self.group = self.actor_group(starts)
        self.group.publish(self.weights(), self.state["env_steps"])
        self.group.start()
        self._rate_updates = self.state["updates"]
        self._restarts_before = self.state["actor_restarts"]

    def learned(self, metrics: dict[str, float]) -> None:
        """Counts an update and publishes the weights when it is their turn."""
        self.state["updates"] += 1
        if self.state["updates"] % self.hp.workers.policy_refresh_every == 0:
            self.group.publish(self.weights(), self.state["env_steps"])

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

    def take(self, timeout: float) -> list[dict[str, Any]]:
        """Up to one block per actor; counts restarts."""
        blocks = self.group.take(self.num_workers, timeout)
        self.state["actor_restarts"] = self._restarts_before + self.group.restarts
        return blocks

    def _may_update(self) -> bool:
        """One update per train_every env steps from learning_starts on (the set's ratio)."""
        hp = self.hp
        if not hp.workers.rate_limit:
            return True
        learning_steps = self.state["env_steps"] - hp.learning_starts
        return learning_steps >= 0 and self.state["updates"] <= learning_steps // hp.train_every

    def evaluate(self, requests: Sequence[EvalRequest]) -> list[EvalResult]:
        return [self.evaluate_agent(request.seed) for request in requests]

    def log_metrics(self, index: int) -> dict[str, float]:
        now = time.monotonic()
        updates = self.state["updates"]
        metrics = self.agent.metrics()
        metrics.pop("train/epsilon", None)  # the learner does not act: see workers/<i>/
        metrics.update(self.stats.scalars())
        elapsed = max(now - self._rate_start, 1e-9)
        metrics["time/updates_per_second"] = (updates - self._rate_updates) / elapsed
        metrics["workers/queued_blocks"] = self.group.queued_blocks()
        self.state["actor_restarts"] = self._restarts_before + self.group.count_restarts()
        metrics["workers/restarts"] = self.state["actor_restarts"]
        metrics.update(self.learner_metrics())
        self._rate_start, self._rate_updates = now, updates
        return metrics

    def learner_metrics(self) -> dict[str, float]:
        return {"workers/replay_size": len(self.agent.replay)}

    def close(self) -> None:
        if self.group is not None:
            self.group.stop()
        self.eval_env.close()
