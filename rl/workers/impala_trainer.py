"""IMPALA training: N asynchronous actor processes act, this process learns with V-trace
(train.py --num_workers N > 1 with an agent whose class sets `asynchronous_actors`: impala).

Espeholt et al. 2018, "IMPALA: Scalable Distributed Deep-RL with Importance Weighted
Actor-Learner Architectures", https://arxiv.org/abs/1802.01561, section 3.

Actors (rl/workers/impala_actor.py) each step num_envs / N env copies and send unrolls of T
steps with the behaviour log-probs, tagged with the version of the weights that acted. They
never wait for the learner, only on the bounded queue (`workers.queue_blocks` unrolls per
actor). The learner takes unrolls in arrival order, from whichever actors sent them, and as
soon as it holds N of them (num_envs env rows: the single-process batch shape) it learns from
them (`Impala.add_unroll`, `update`: V-trace corrects for the actors' older policies) and
publishes its weights every `workers.policy_refresh_every` updates. That is what makes it
IMPALA rather than the lockstep env workers (rl/workers/grouped_env.py): acting and learning
overlap, and a slow actor delays nobody.

Policy lag: for each unroll learned from, the learner's weights version (publications so far)
minus the version the unroll was acted with; with policy_refresh_every = 1 that is the number
of updates the behaviour policy is behind. Logged as `workers/policy_lag` (mean) and
`workers/policy_lag_max` over the unrolls since the last log, and a progress.csv column.

Process lifecycle, evaluation, checkpoints and resume are the Ape-X trainer's
(rl/workers/apex_trainer.py, which this subclasses): a checkpoint holds the learner (weights,
optimizer, counters) and the trainer's counters; unrolls in flight or waiting for a batch when
the run stops are lost and the actors' episodes restart on resume. Exact resume is not
promised, and the run may overshoot `train_steps` by up to one unroll.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from rl.rollout import Rollout, concatenate
from rl.utils.files import join
from rl.utils.seeding import derive_seed
from rl.workers.actor_pool import ActorPool
from rl.workers.apex_trainer import IDLE_WAIT_SECONDS, ApexTrainer, _next_multiple
from rl.workers.impala_actor import ENTRY, actor_hparams
from rl.workers.progress import WorkerProgressCSV, WorkerStats
from rl.workers.weights import policy_variables


def concatenate_unrolls(unrolls: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Actors' unrolls side by side along the env axis ([T, n, ...] each -> [T, sum n, ...])."""
    rollouts = [Rollout.from_batch(unroll) for unroll in unrolls]
    return concatenate(rollouts, axis="envs").numpy().as_batch()


class ImpalaTrainer(ApexTrainer):
    """Runs one copy (seed) of an experiment as an IMPALA learner with `num_workers` actors."""

    def _restored_parts(self, agent) -> str:
        return "learner"

    def _progress_csv(self, path: str, env_steps: int) -> WorkerProgressCSV:
        return WorkerProgressCSV(
            path, self.num_workers, env_steps, learner_columns={"policy_lag": "workers/policy_lag"}
        )

    def _start_actors(self, agent, state: dict[str, Any]) -> ActorPool:
        n, starts, hp = self.num_workers, state["worker_starts"], self.hp
        state["worker_starts"] += 1
        pool = ActorPool(
            n,
            hp.to_json(),
            env_seeds=[derive_seed(self.seed, "actor_env", i, starts) for i in range(n)],
            agent_seeds=[derive_seed(self.seed, "actor_agent", i, starts) for i in range(n)],
            initial_weights=[v.numpy() for v in policy_variables(agent)],
            queue_blocks=hp.workers.queue_blocks,
            entry=ENTRY,
        )
        pool.publish([v.numpy() for v in policy_variables(agent)], state["env_steps"])
        pool.start()
        actor = actor_hparams(hp, n)
        print(
            f"[{self.label}] IMPALA: {n} actor processes x {actor.num_envs} env copies, unrolls "
            f"of {agent.unroll_length} steps; this learner learns from {n} unrolls at a time"
        )
        return pool

    def _loop(self, agent, pool, eval_env, logger, console, checkpoint, state) -> None:
        hp, n = self.hp, self.num_workers
        variables = policy_variables(agent)
        stats = WorkerStats(n)
        next_eval = _next_multiple(state["env_steps"], hp.eval.every_steps)
        next_checkpoint = _next_multiple(state["env_steps"], hp.checkpoint_every)
        next_log = _next_multiple(state["env_steps"], hp.log_every)
        wall_start = time.monotonic() - state["wall_seconds"]
        rate_start, rate_steps = time.monotonic(), state["env_steps"]
        rate_updates = state["updates"]
        episode_returns: list[float] = []
        episode_lengths: list[float] = []
        lags: list[int] = []
        pending: list[dict[str, Any]] = []  # unrolls received, not yet learned from
        traceback_dir = join(self.run_dir, "workers")
        while state["env_steps"] < hp.train_steps and not state["stopped_early"]:
            pool.check(traceback_dir)
            # Wait (briefly) for unrolls only when there is no batch to learn from meanwhile.
            timeout = 0.0 if len(pending) >= n else IDLE_WAIT_SECONDS
            for block in pool.take(n, timeout):
                if int(agent.env_steps.numpy()) >= hp.train_steps:
                    break  # the budget is spent: drop the rest
                pending.append(block)
                agent.env_steps.assign_add(block["env_steps"])
                stats.add(block)
                episode_returns.extend(block["episode_returns"])
                episode_lengths.extend(block["episode_lengths"])
                state["episodes"] += len(block["episode_returns"])
            if len(pending) >= n:
                batch, pending = pending[:n], pending[n:]
                agent.add_unroll(concatenate_unrolls([block["unroll"] for block in batch]))
                version = pool.weights.version
                lags.extend(version - block["weights_version"] for block in batch)
                update_metrics = agent.update()
                state["updates"] += 1
                if state["updates"] % hp.workers.policy_refresh_every == 0:
                    pool.publish([v.numpy() for v in variables], state["env_steps"])
                logger.record_many(update_metrics)
            steps = state["env_steps"] = int(agent.env_steps.numpy())
            state["wall_seconds"] = time.monotonic() - wall_start
            finished = steps >= hp.train_steps
            evaluation: dict[str, float] = {}
            if steps >= next_eval or finished:
                evaluation = self._evaluate(agent, eval_env, state)
                state["wall_seconds"] = time.monotonic() - wall_start
                if state["first_step_at_threshold"] == steps:
                    state["first_wall_at_threshold"] = state["wall_seconds"]
                logger.record_many(evaluation)
                next_eval = _next_multiple(steps, hp.eval.every_steps)
            now = time.monotonic()
            steps_per_second = (steps - rate_steps) / max(now - rate_start, 1e-9)
            if steps >= next_log or finished or evaluation:
                if episode_returns:
                    logger.record("train/episode_return", float(np.mean(episode_returns)))
                    logger.record("train/episode_length", float(np.mean(episode_lengths)))
                    episode_returns, episode_lengths = [], []
                if lags:
                    logger.record("workers/policy_lag", float(np.mean(lags)))
                    logger.record("workers/policy_lag_max", float(np.max(lags)))
                    lags = []
                logger.record_many(agent.metrics())
                logger.record_many(stats.scalars())
                updates_per_second = (state["updates"] - rate_updates) / max(now - rate_start, 1e-9)
                logger.record("time/steps_per_second", steps_per_second)
                logger.record("time/updates_per_second", updates_per_second)
                logger.record("time/wall_seconds", state["wall_seconds"])
                logger.record("train/episodes", state["episodes"])
                logger.record("workers/queued_blocks", pool.queued_blocks())
                logger.dump(steps)
                next_log = _next_multiple(steps, hp.log_every)
                rate_start, rate_steps, rate_updates = now, steps, state["updates"]
            if steps > rate_steps or evaluation:  # no progress line while actors start
                console.write({"time/steps_per_second": steps_per_second, **evaluation}, steps)
            if steps >= next_checkpoint or finished or state["stopped_early"]:
                self.store.save(steps, checkpoint, agent.numpy_state(), dict(state))
                next_checkpoint = _next_multiple(steps, hp.checkpoint_every)
