"""The one training loop: collect, update, evaluate, checkpoint, log.

Every algorithm runs through `Trainer.train` unchanged; an algorithm only decides how many
vector steps to collect per iteration (`agent.steps_per_iteration`) and what `update` does.

Exact resume. A checkpoint holds the agent (weights, optimizer slots, counters, generator),
its numpy state (replay, priorities, n-step data, numpy RNG) and the trainer's counters. Env
simulator state is not generally serializable (Box2D, Atari), so every checkpoint is also an
episode boundary: the running episodes are cut (the agent treats the cut as a truncation and
bootstraps through it) and the envs are reset with a seed derived from the number of cuts so
far. An interrupted run and an uninterrupted one therefore see the same data and, with
deterministic ops, end with bit-identical weights (tests/test_resume.py).

Strategies (`strategy=`, train.py's --strategy; docs/distributed.md). The agent is built under
the strategy's scope, and its gradient steps run across the replicas (`rl.distribute`). With
MultiWorkerMirroredStrategy every worker runs this loop on its own envs (other env seeds) and
its own replay, the gradients are all-reduced and the weights stay identical; only the chief
(worker 0) writes the run dir, the others write into a scratch dir that is removed at the end.
A worker that resumes restores the chief's checkpoint (weights, counters and the chief's replay).
"""

from __future__ import annotations

import contextlib
import math
import shutil
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf

from rl.agents.base import Agent
from rl.distribute import WorkerRole, all_workers_agree, worker_role
from rl.driver import Driver
from rl.envs import make_vector_env
from rl.envs.reward_augmentation import reward_augmentation_from_hparams
from rl.envs.spec import EnvSpec
from rl.errors import UserError
from rl.evaluation import (
    EvalResult,
    evaluate,
    fresh_episode_policy,
    make_eval_env,
    write_protocol_summary,
)
from rl.hparams import HParams
from rl.registry import get_agent
from rl.systems.strategies import shared_strategy
from rl.utils.checkpoint import CheckpointStore
from rl.utils.files import join
from rl.utils.logger import ConsoleSink, CSVSink, Logger, TensorBoardSink
from rl.utils.run_dir import manifest, write_run_files
from rl.utils.seeding import derive_seed, seed_everything
from rl.utils.video import (
    VideoRecorder,
    check_render_possible,
    play_episode,
    use_offscreen_rendering,
    write_frame_strip_summary,
)


@dataclass
class TrainResult:
    env_steps: int
    wall_seconds: float
    last_eval_return: float | None
    first_step_at_threshold: int | None
    already_complete: bool


def initial_state() -> dict[str, Any]:
    return {
        "env_steps": 0,
        "episodes": 0,
        "cuts": 0,
        "evaluations": 0,
        "wall_seconds": 0.0,
        "last_eval_return": None,
        "first_step_at_threshold": None,
        "first_wall_at_threshold": None,
        "stopped_early": False,
    }


class Trainer:
    """Runs one copy (seed) of an experiment in one run directory."""

    def __init__(
        self,
        hparams: HParams,
        run_dir: str,
        seed: int,
        hparams_set: str,
        record_video: bool = False,
        render: bool = False,
        strategy: str = "default",
        num_workers: int = 1,
    ) -> None:
        self.hp = hparams
        self.run_dir = run_dir
        self.strategy_name = strategy
        self.num_workers = num_workers  # processes the training env copies are split over
        self.role = WorkerRole()  # this process's worker index; set by `train`
        self.write_dir = run_dir  # where this process writes: run_dir, or a non-chief's scratch
        self.seed = seed
        self.hparams_set = hparams_set
        self.record_video = record_video
        self.render = render
        self._video: tuple | None = None  # (single render env, VideoRecorder) when recording
        self._tensorboard: TensorBoardSink | None = None
        self.label = run_dir.rstrip("/").split("/")[-1]
        self.store = CheckpointStore(join(run_dir, "checkpoints"), hparams.keep_checkpoints)
        self.save_store = self.store

    # ------------------------------------------------------------------------ building
    def _make_env(self, num_envs: int, seed: int, training: bool = False):
        """Training envs carry the set's reward augmentation; eval/test envs never do, so
        every reported eval and test return is the env's own reward."""
        hp = self.hp
        return make_vector_env(
            hp.env,
            num_envs,
            seed,
            env_kwargs=hp.env_kwargs,
            max_episode_steps=hp.max_episode_steps,
            reward_augmentation=reward_augmentation_from_hparams(hp) if training else None,
            num_workers=self.num_workers if training else 1,
        )

    def _make_render_env(self, render_mode: str):
        """One plain env (with the factory's wrappers) that renders; vector envs reset inside
        the final step, so their last frame would show the next episode."""
        hp = self.hp
        use_offscreen_rendering()
        vec_env, _ = make_vector_env(
            hp.env,
            1,
            0,
            env_kwargs={**hp.env_kwargs, "render_mode": render_mode},
            max_episode_steps=hp.max_episode_steps,
        )
        env = vec_env.envs[0]
        message = check_render_possible(render_mode, env.metadata.get("render_modes"))
        if message:
            vec_env.close()
            raise UserError(f"env {hp.env!r}: {message}")
        return vec_env, env

    def _recorder(self, env) -> VideoRecorder:
        return VideoRecorder(join(self.write_dir, "videos"), fps=env.metadata.get("render_fps", 30))

    def _worker_names(self) -> tuple:
        """Folded into a non-chief worker's seeds, so each worker has its own data."""
        return () if self.role.is_chief else ("worker", self.role.index)

    def _train_env_seed(self, cuts: int) -> int:
        return derive_seed(self.seed, "train_env", cuts, *self._worker_names())

    def _build_agent(self, spec: EnvSpec, strategy: tf.distribute.Strategy | None = None) -> Agent:
        """The agent; its variables and optimizer slots under `strategy`'s scope if given."""
        seed_everything(derive_seed(self.seed, "init"), self.hp.deterministic)
        distributed = strategy is not None and self.strategy_name != "default"
        with strategy.scope() if distributed else contextlib.nullcontext():
            return get_agent(self.hp.agent)(
                spec, self.hp, derive_seed(self.seed, "agent", *self._worker_names())
            )

    # ------------------------------------------------------------------------ training
    def train(self) -> TrainResult:
        from rl.workers.checks import uses_asynchronous_actors

        if self.num_workers > 1 and uses_asynchronous_actors(self.hp):
            # IMPALA: asynchronous actor processes feed a learner here (docs/workers.md).
            from rl.workers.impala_trainer import ImpalaTrainer

            return ImpalaTrainer(
                self.hp,
                self.run_dir,
                self.seed,
                self.hparams_set,
                self.record_video,
                num_workers=self.num_workers,
            ).train()
        strategy = shared_strategy(self.strategy_name)
        self.role = worker_role(strategy)
        if self.role.is_chief:
            return self._train(strategy)
        self.write_dir = self.role.scratch_dir()
        self.save_store = CheckpointStore(join(self.write_dir, "checkpoints"), self.store.keep)
        try:
            return self._train(strategy)
        finally:
            shutil.rmtree(self.write_dir, ignore_errors=True)
            self.write_dir, self.save_store = self.run_dir, self.store

    def _train(self, strategy: tf.distribute.Strategy) -> TrainResult:
        hp = self.hp
        env, spec = self._make_env(hp.num_envs, self._train_env_seed(0), training=True)
        eval_env, eval_spec = make_eval_env(
            hp, hp.eval.episodes, derive_seed(self.seed, "eval_env")
        )
        self._eval_options = {
            "epsilon": hp.eval.epsilon,
            "full_games": eval_spec.reports_game_score,
            "step_budget": hp.eval.step_budget,
        }
        agent = self._build_agent(spec, strategy)
        render_vec_env = None
        if self.record_video:
            render_vec_env, render_env = self._make_render_env("rgb_array")
            self._video = (render_env, self._recorder(render_env))
        checkpoint = tf.train.Checkpoint(agent=agent)
        state = initial_state()
        pointer = self.store.latest()
        if pointer is not None:
            numpy_state, state = self.store.restore(checkpoint, pointer)
            agent.load_numpy_state(numpy_state)
            if state["env_steps"] >= hp.train_steps or state["stopped_early"]:
                print(
                    f"[{self.label}] already complete at {state['env_steps']:,} env steps "
                    f"(last eval {state['last_eval_return']}); nothing to do"
                )
                return self._result(state, already_complete=True)
            print(f"[{self.label}] resuming from checkpoint at {state['env_steps']:,} env steps")
        if self.role.multi_worker:
            # A barrier: every worker has read the run dir before the chief writes to it.
            all_workers_agree(strategy, True)
            if not self.role.is_chief:  # explore differently from the chief (same weights)
                names = (*self._worker_names(), state["env_steps"])
                agent.generator.reset_from_seed(derive_seed(self.seed, "agent", *names))
        write_run_files(
            self.write_dir, hp, manifest(self.seed, _copy_index(self.label), self.hparams_set)
        )
        tensorboard = self._tensorboard = TensorBoardSink(self.write_dir)
        if pointer is None:
            tensorboard.write_hparams(hp.flat_scalars(), trial_id=self.label)
            write_protocol_summary(tensorboard.writer("eval"), hp)
        logger = Logger(
            [
                tensorboard,
                CSVSink(join(self.write_dir, "progress.csv"), resume_at_step=state["env_steps"]),
            ]
        )
        worker = "" if self.role.is_chief else f" worker {self.role.index}"
        console = ConsoleSink(hp.train_steps, self.label + worker)
        driver = Driver(env, spec, agent)
        driver.reset(self._train_env_seed(state["cuts"]))
        try:
            self._loop(agent, driver, eval_env, logger, console, checkpoint, state)
            if state["stopped_early"]:
                print(
                    f"[{self.label}] eval return {state['last_eval_return']:.1f} reached "
                    f"stop_at_eval_return={hp.stop_at_eval_return}: stopped at "
                    f"{state['env_steps']:,} env steps"
                )
        finally:
            logger.close()
            env.close()
            eval_env.close()
            if render_vec_env is not None:
                render_vec_env.close()
        return self._result(state, already_complete=False)

    def _loop(self, agent, driver, eval_env, logger, console, checkpoint, state) -> None:
        hp = self.hp
        num_envs = driver.spec.num_envs
        next_eval = _next_multiple(state["env_steps"], hp.eval.every_steps)
        next_checkpoint = _next_multiple(state["env_steps"], hp.checkpoint_every)
        next_log = _next_multiple(state["env_steps"], hp.log_every)
        wall_start = time.monotonic() - state["wall_seconds"]
        rate_start, rate_steps = time.monotonic(), state["env_steps"]
        steps = state["env_steps"]
        while steps < hp.train_steps and not state["stopped_early"]:
            vector_steps = min(
                agent.steps_per_iteration, math.ceil((hp.train_steps - steps) / num_envs)
            )
            driver.collect(vector_steps)
            update_metrics = agent.update()
            steps = int(agent.env_steps.numpy())
            state["env_steps"] = steps
            state["wall_seconds"] = time.monotonic() - wall_start
            returns, lengths = driver.stats.pop()
            state["episodes"] += len(returns)
            if returns:
                logger.record("train/episode_return", float(np.mean(returns)))
                logger.record("train/episode_length", float(np.mean(lengths)))
                if driver.spec.reports_game_score:  # Atari: the same, named for what it is
                    logger.record("train/clipped_return_mean", float(np.mean(returns)))
            game_scores = driver.stats.pop_game_scores()
            if game_scores:  # Atari: raw full-game scores of the games that ended
                logger.record("train/raw_score_mean", float(np.mean(game_scores)))
            # --log_level DEBUG: per-update diagnostics go to TensorBoard at every update.
            debug = {k: v for k, v in update_metrics.items() if k.startswith("debug/")}
            if debug:
                self._tensorboard.write(debug, steps)
            logger.record_many({k: v for k, v in update_metrics.items() if k not in debug})
            now = time.monotonic()
            steps_per_second = (steps - rate_steps) / max(now - rate_start, 1e-9)
            logger.record("time/steps_per_second", steps_per_second)
            logger.record("time/wall_seconds", state["wall_seconds"])
            finished = steps >= hp.train_steps
            evaluation: dict[str, float] = {}
            if steps >= next_eval or finished:
                evaluation = self._evaluate(agent, eval_env, state)
                # Wall time to a threshold includes the evaluation that found it (as in SB3).
                state["wall_seconds"] = time.monotonic() - wall_start
                if state["first_step_at_threshold"] == steps:
                    state["first_wall_at_threshold"] = state["wall_seconds"]
                logger.record_many(evaluation)
                next_eval = _next_multiple(steps, hp.eval.every_steps)
            if steps >= next_log or finished or evaluation:
                logger.record_many(agent.metrics())
                logger.record("train/episodes", state["episodes"])
                logger.dump(steps)
                next_log = _next_multiple(steps, hp.log_every)
                rate_start, rate_steps = now, steps
            console.write({"time/steps_per_second": steps_per_second, **evaluation}, steps)
            if steps >= next_checkpoint or steps >= hp.train_steps or state["stopped_early"]:
                self._checkpoint(agent, driver, checkpoint, state)
                next_checkpoint = _next_multiple(steps, hp.checkpoint_every)

    def _evaluate(self, agent, eval_env, state) -> dict[str, float]:
        hp = self.hp
        eval_seed = derive_seed(self.seed, "eval", state["evaluations"])
        result = evaluate(agent, eval_env, eval_seed, **self._eval_options)
        if self._video is not None and state["evaluations"] % hp.eval.video_every == 0:
            # Film the evaluation's first episode: a single env reset with the same seed replays
            # exactly the episode env copy 0 of the eval vector env played.
            render_env, recorder = self._video
            episode = play_episode(render_env, fresh_episode_policy(agent), seed=eval_seed)
            recorder.record_episode(episode.frames, state["env_steps"], 0, "eval")
            write_frame_strip_summary(
                episode.frames, state["env_steps"], self._tensorboard.writer("eval")
            )
        state["evaluations"] += 1
        state["last_eval_return"] = result.return_mean
        threshold = hp.stop_at_eval_return
        if threshold is not None and result.return_mean >= threshold:
            if state["first_step_at_threshold"] is None:
                state["first_step_at_threshold"] = state["env_steps"]
            state["stopped_early"] = True
        return result.metrics("eval")

    def _checkpoint(self, agent, driver, checkpoint, state) -> None:
        # Cut the running episodes (see the module docstring), then save, then restart envs.
        agent.end_all_episodes()
        state["cuts"] += 1
        self.save_store.save(state["env_steps"], checkpoint, agent.numpy_state(), dict(state))
        driver.reset(self._train_env_seed(state["cuts"]))

    def _result(self, state: dict[str, Any], already_complete: bool) -> TrainResult:
        return TrainResult(
            env_steps=state["env_steps"],
            wall_seconds=state["wall_seconds"],
            last_eval_return=state["last_eval_return"],
            first_step_at_threshold=state["first_step_at_threshold"],
            already_complete=already_complete,
        )

    # ---------------------------------------------------------------------------- test
    def test(self, episodes: int) -> EvalResult:
        """Restores the latest checkpoint and plays `episodes` greedy episodes."""
        env, spec = make_eval_env(self.hp, episodes, derive_seed(self.seed, "test_env"))
        agent = self._build_agent(spec)
        checkpoint = tf.train.Checkpoint(agent=agent)
        pointer = self.store.latest()
        self.store.restore(checkpoint, pointer)
        test_seed = derive_seed(self.seed, "test")
        result = evaluate(
            agent, env, test_seed, self.hp.eval.epsilon, full_games=spec.reports_game_score
        )
        env.close()
        tensorboard = TensorBoardSink(self.run_dir)
        for i, (ret, length) in enumerate(zip(result.returns, result.lengths, strict=True)):
            tensorboard.write({"test/episode_return": ret, "test/episode_length": length}, i)
        modes = [m for m, on in (("human", self.render), ("rgb_array", self.record_video)) if on]
        for mode in modes:
            render_vec_env, render_env = self._make_render_env(mode)
            recorder = self._recorder(render_env)
            for i in range(episodes):  # seed test_seed + i replays row i of the table below
                episode = play_episode(render_env, fresh_episode_policy(agent), seed=test_seed + i)
                if mode == "rgb_array":
                    path = recorder.record_episode(episode.frames, pointer["step"], i, "test")
                    write_frame_strip_summary(episode.frames, i, tensorboard.writer("test"))
                    print(f"[{self.label}] video {path}")
            render_vec_env.close()
        tensorboard.close()
        print(f"[{self.label}] checkpoint at {pointer['step']:,} env steps")
        print(f"{'episode':>8} {'return':>10} {'length':>8}")
        for i, (ret, length) in enumerate(zip(result.returns, result.lengths, strict=False)):
            print(f"{i:>8} {ret:>10.2f} {length:>8}")
        print(
            f"[{self.label}] test return {result.return_mean:.2f} ± {result.return_std:.2f} "
            f"over {len(result.returns)} episodes"
        )
        return result


def _next_multiple(step: int, every: int) -> int:
    return (step // every + 1) * every


def _copy_index(label: str) -> int:
    try:
        return int(label.rsplit("_", 1)[1])
    except (IndexError, ValueError):
        return 0
