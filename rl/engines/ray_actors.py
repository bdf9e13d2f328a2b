"""The learner-here, actors-on-Ray engine that Ape-X and IMPALA share (`--num_workers N > 1`).

This process holds the one agent that learns; `num_workers` Ray actors (rl/workers/) act with
the weights it publishes. What is common lives here: starting the actor group with per-actor
seeds that change with every start, publishing weights every `workers.policy_refresh_every`
updates, taking blocks and counting actor restarts, evaluation, logging and closing. A subclass
says what an actor sends and how the learner consumes it: `actor_class`, `iterate` and the
hooks under "what a subclass says" (rl/engines/apex.py, rl/engines/impala.py).

Resume restores the learner (and its replay, Ape-X) and starts fresh actors. It is not exact:
what actors collect depends on process timing, and their partial episodes are not saved.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from rl.agents.build import build_agent
from rl.engines.base import EvalRequest, Iteration, OneAgentEngine
from rl.envs import make_vector_env
from rl.evaluation import EvalResult
from rl.hparams import HParams
from rl.utils.files import join
from rl.utils.logger import Sink
from rl.utils.seeding import derive_seed
from rl.workers.actor_group import ActorGroup
from rl.workers.progress import WorkerStats
from rl.workers.waiting import DEFAULT_ACTOR_WAIT_SECONDS
from rl.workers.weights import PolicyWeights

IDLE_WAIT_SECONDS = 0.1  # how long the learner waits for blocks when it has nothing to learn


class RayActorsEngine(OneAgentEngine):
    """One run (seed) as a learner here with `num_workers` Ray actors of `actor_class`."""

    extra_state = {"updates": 0, "worker_starts": 0, "actor_restarts": 0}
    actor_class: type  # rl/workers/actor.py's RemoteActor subclass

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

    # ---------------------------------------------------------------- what a subclass says
    def iterate(self, active: Sequence[bool]) -> list[Iteration]:
        """Takes the actors' blocks and learns from them as the algorithm does."""
        raise NotImplementedError

    def restored_parts(self) -> str:
        """What a resume restored, for its console line."""
        raise NotImplementedError

    def progress_sink(self, path: str, resume_at_step: int) -> Sink | None:
        raise NotImplementedError

    def calls_in_flight(self) -> int:
        """Per actor: the calls the actor group keeps submitted."""
        raise NotImplementedError

    def start_line(self) -> str:
        """The console line that says how acting and learning are split."""
        raise NotImplementedError

    def learner_metrics(self) -> dict[str, float]:
        """The algorithm's own `workers/` scalars at each log."""
        return {}

    # -------------------------------------------------------------------------- protocol
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

    def take(self, timeout: float) -> list[dict[str, Any]]:
        """Up to one block per actor; counts restarts."""
        blocks = self.group.take(self.num_workers, timeout)
        self.state["actor_restarts"] = self._restarts_before + self.group.restarts
        return blocks

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

    def close(self) -> None:
        if self.group is not None:
            self.group.stop()
        self.eval_env.close()
