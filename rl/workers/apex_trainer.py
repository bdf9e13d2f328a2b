"""Ape-X training: N actor processes act, this process learns (train.py --num_workers N > 1 with
a replay agent: DQN, TD3/DDPG, SAC).

Horgan et al. 2018, "Distributed Prioritized Experience Replay", https://arxiv.org/abs/1803.00933.
Actors (rl/workers/actor.py) each step their own vector env with their own seeds and exploration
(rl/workers/exploration.py) and stream n-step transitions with actor-side priorities. The
learner adds every block to its replay, counts the env steps, and trains: one `agent.update()`
(`gradient_steps` gradient steps in one compiled call) whenever the replay ratio allows
(`workers.rate_limit`: the set's gradient_steps per train_every env steps, as in single-process
training; off: as fast as it can, as in the paper). Every `workers.policy_refresh_every`
updates it publishes its weights to the actors. Evaluation, checkpoints (replay included),
TensorBoard, progress.csv and the console line are the single-process trainer's, plus
throughput and per-worker statistics (rl/workers/progress.py).

Resume. A checkpoint holds the learner (weights, optimizer, counters), its replay and the
trainer's counters; a resumed run restores them, starts fresh actors (new env seeds, derived
from the number of starts so far) and continues. Exact resume is NOT promised here, unlike
rl/trainer.py: what the actors collect depends on process timing, and their partial episodes
and n-step windows are not checkpointed. Nor is the stopping point exact: the run ends at the
first block that reaches `train_steps`, so it may overshoot by up to one block per actor.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import tensorflow as tf

from rl.envs import make_vector_env
from rl.evaluation import evaluate, make_eval_env, write_protocol_summary
from rl.hparams import HParams
from rl.registry import get_agent
from rl.trainer import TrainResult, initial_state
from rl.utils.checkpoint import CheckpointStore
from rl.utils.files import join
from rl.utils.logger import ConsoleSink, Logger, TensorBoardSink
from rl.utils.run_dir import manifest, write_run_files
from rl.utils.seeding import derive_seed, seed_everything
from rl.workers.actor_pool import ActorPool
from rl.workers.exploration import actor_epsilon
from rl.workers.progress import WorkerProgressCSV, WorkerStats
from rl.workers.weights import policy_variables

IDLE_WAIT_SECONDS = 0.1  # how long the learner waits for blocks when it may not update


class ApexTrainer:
    """Runs one copy (seed) of an experiment as an Ape-X learner with `num_workers` actors."""

    def __init__(
        self,
        hparams: HParams,
        run_dir: str,
        seed: int,
        hparams_set: str,
        record_video: bool = False,
        *,
        num_workers: int,
    ) -> None:
        """As rl.trainer.Trainer's; `record_video` must be False (rl/workers/checks.py)."""
        if record_video:
            raise ValueError("ApexTrainer does not record videos; check_num_workers refuses it")
        self.hp = hparams
        self.run_dir = run_dir
        self.seed = seed
        self.hparams_set = hparams_set
        self.num_workers = num_workers
        self.label = run_dir.rstrip("/").split("/")[-1]
        self.store = CheckpointStore(join(run_dir, "checkpoints"), hparams.keep_checkpoints)

    # ------------------------------------------------------------------------ training
    def train(self) -> TrainResult:
        hp = self.hp
        # The learner acts only in evaluation; this env only describes the training envs.
        probe_env, spec = make_vector_env(
            hp.env, hp.num_envs, 0, env_kwargs=hp.env_kwargs, max_episode_steps=hp.max_episode_steps
        )
        probe_env.close()
        eval_seed = derive_seed(self.seed, "eval_env")
        eval_env, eval_spec = make_eval_env(hp, hp.eval.episodes, eval_seed)
        self._eval_options = {
            "epsilon": hp.eval.epsilon,
            "full_games": eval_spec.reports_game_score,
            "step_budget": hp.eval.step_budget,
        }
        seed_everything(derive_seed(self.seed, "init"), hp.deterministic)
        agent = get_agent(hp.agent)(spec, hp, derive_seed(self.seed, "agent"))
        checkpoint = tf.train.Checkpoint(agent=agent)
        state = {**initial_state(), "updates": 0, "worker_starts": 0}
        pointer = self.store.latest()
        if pointer is not None:
            numpy_state, saved = self.store.restore(checkpoint, pointer)
            agent.load_numpy_state(numpy_state)
            state.update(saved)
            if state["env_steps"] >= hp.train_steps or state["stopped_early"]:
                eval_env.close()
                print(
                    f"[{self.label}] already complete at {state['env_steps']:,} env steps "
                    f"(last eval {state['last_eval_return']}); nothing to do"
                )
                return self._result(state, already_complete=True)
            print(
                f"[{self.label}] resuming from checkpoint at {state['env_steps']:,} env steps "
                f"({self._restored_parts(agent)}; fresh actors)"
            )
        run_manifest = manifest(self.seed, _copy_index(self.label), self.hparams_set)
        run_manifest["num_workers"] = self.num_workers
        write_run_files(self.run_dir, hp, run_manifest)
        tensorboard = TensorBoardSink(self.run_dir)
        if pointer is None:
            tensorboard.write_hparams(hp.flat_scalars(), trial_id=self.label)
            write_protocol_summary(tensorboard.writer("eval"), hp)
        progress = join(self.run_dir, "progress.csv")
        logger = Logger([tensorboard, self._progress_csv(progress, state["env_steps"])])
        console = ConsoleSink(hp.train_steps, self.label)
        pool = self._start_actors(agent, state)
        try:
            self._loop(agent, pool, eval_env, logger, console, checkpoint, state)
            if state["stopped_early"]:
                print(
                    f"[{self.label}] eval return {state['last_eval_return']:.1f} reached "
                    f"stop_at_eval_return={hp.stop_at_eval_return}: stopped at "
                    f"{state['env_steps']:,} env steps"
                )
        finally:
            pool.stop()
            logger.close()
            eval_env.close()
        return self._result(state, already_complete=False)

    def _restored_parts(self, agent) -> str:
        """What a resume restored, for its console line (IMPALA's learner has no replay)."""
        return f"learner and replay of {len(agent.replay):,} transitions"

    def _progress_csv(self, path: str, env_steps: int) -> WorkerProgressCSV:
        return WorkerProgressCSV(path, self.num_workers, env_steps)

    def _start_actors(self, agent, state: dict[str, Any]) -> ActorPool:
        n, starts = self.num_workers, state["worker_starts"]
        state["worker_starts"] += 1
        pool = ActorPool(
            n,
            self.hp.to_json(),
            env_seeds=[derive_seed(self.seed, "actor_env", i, starts) for i in range(n)],
            agent_seeds=[derive_seed(self.seed, "actor_agent", i, starts) for i in range(n)],
            initial_weights=[v.numpy() for v in policy_variables(agent)],
            queue_blocks=self.hp.workers.queue_blocks,
        )
        pool.publish([v.numpy() for v in policy_variables(agent)], state["env_steps"])
        pool.start()
        epsilons = [actor_epsilon(self.hp, i, n) for i in range(n)]
        exploration = (
            "epsilons " + ", ".join(f"{e:.3g}" for e in epsilons)
            if epsilons[0] is not None
            else "the agent's own exploration"
        )
        print(f"[{self.label}] Ape-X: {n} actor processes ({exploration}) and this learner")
        return pool

    def _loop(self, agent, pool, eval_env, logger, console, checkpoint, state) -> None:
        hp = self.hp
        variables = policy_variables(agent)
        stats = WorkerStats(self.num_workers)
        next_eval = _next_multiple(state["env_steps"], hp.eval.every_steps)
        next_checkpoint = _next_multiple(state["env_steps"], hp.checkpoint_every)
        next_log = _next_multiple(state["env_steps"], hp.log_every)
        wall_start = time.monotonic() - state["wall_seconds"]
        rate_start, rate_steps = time.monotonic(), state["env_steps"]
        rate_updates = state["updates"]
        episode_returns: list[float] = []
        episode_lengths: list[float] = []
        traceback_dir = join(self.run_dir, "workers")
        while state["env_steps"] < hp.train_steps and not state["stopped_early"]:
            pool.check(traceback_dir)
            learned = False
            if self._may_update(state):
                update_metrics = agent.update()  # {} while the replay is too small
                if update_metrics:
                    learned = True
                    state["updates"] += 1
                    if state["updates"] % hp.workers.policy_refresh_every == 0:
                        pool.publish([v.numpy() for v in variables], state["env_steps"])
                    logger.record_many(update_metrics)
            # Rate-limited, the learner takes new data only once it has learned from the old
            # (actors wait on the full queue meanwhile); otherwise it takes what is there.
            if not learned or not hp.workers.rate_limit:
                timeout = 0.0 if learned else IDLE_WAIT_SECONDS
                for block in pool.take(self.num_workers, timeout):
                    if int(agent.env_steps.numpy()) >= hp.train_steps:
                        break  # the budget is spent: drop the rest
                    if block["transitions"] is not None:
                        agent.add_transitions(block["transitions"], block["priorities"])
                    agent.env_steps.assign_add(block["env_steps"])
                    stats.add(block)
                    episode_returns.extend(block["episode_returns"])
                    episode_lengths.extend(block["episode_lengths"])
                    state["episodes"] += len(block["episode_returns"])
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
                metrics = agent.metrics()
                metrics.pop("train/epsilon", None)  # the learner does not act: see workers/<i>/
                logger.record_many(metrics)
                logger.record_many(stats.scalars())
                updates_per_second = (state["updates"] - rate_updates) / max(now - rate_start, 1e-9)
                logger.record("time/steps_per_second", steps_per_second)
                logger.record("time/updates_per_second", updates_per_second)
                logger.record("time/wall_seconds", state["wall_seconds"])
                logger.record("train/episodes", state["episodes"])
                logger.record("workers/replay_size", len(agent.replay))
                logger.record("workers/queued_blocks", pool.queued_blocks())
                logger.dump(steps)
                next_log = _next_multiple(steps, hp.log_every)
                rate_start, rate_steps, rate_updates = now, steps, state["updates"]
            if steps > rate_steps or evaluation:  # no progress line while actors start
                console.write({"time/steps_per_second": steps_per_second, **evaluation}, steps)
            if steps >= next_checkpoint or finished or state["stopped_early"]:
                self.store.save(steps, checkpoint, agent.numpy_state(), dict(state))
                next_checkpoint = _next_multiple(steps, hp.checkpoint_every)

    def _may_update(self, state: dict[str, Any]) -> bool:
        """The rate limit: the set's replay ratio (one update per train_every env steps from
        learning_starts on, as rl/trainer.py does), or always without it."""
        hp = self.hp
        if not hp.workers.rate_limit:
            return True
        learning_steps = state["env_steps"] - hp.learning_starts
        return learning_steps >= 0 and state["updates"] <= learning_steps // hp.train_every

    def _evaluate(self, agent, eval_env, state: dict[str, Any]) -> dict[str, float]:
        eval_seed = derive_seed(self.seed, "eval", state["evaluations"])
        result = evaluate(agent, eval_env, eval_seed, **self._eval_options)
        state["evaluations"] += 1
        state["last_eval_return"] = result.return_mean
        threshold = self.hp.stop_at_eval_return
        if threshold is not None and result.return_mean >= threshold:
            if state["first_step_at_threshold"] is None:
                state["first_step_at_threshold"] = state["env_steps"]
            state["stopped_early"] = True
        return result.metrics("eval")

    def _result(self, state: dict[str, Any], already_complete: bool) -> TrainResult:
        return TrainResult(
            env_steps=state["env_steps"],
            wall_seconds=state["wall_seconds"],
            last_eval_return=state["last_eval_return"],
            first_step_at_threshold=state["first_step_at_threshold"],
            already_complete=already_complete,
        )


def _next_multiple(step: int, every: int) -> int:
    return (step // every + 1) * every


def _copy_index(label: str) -> int:
    try:
        return int(label.rsplit("_", 1)[1])
    except (IndexError, ValueError):
        return 0
