"""The in-process engine: gymnasium vector envs stepped by `rl.rollout.driver.Driver`, the agent
learning in this process, optionally under a tf.distribute strategy.

Exact resume: env simulator state is not generally serializable (Box2D, Atari), so every
scheduled checkpoint (`checkpoint_every`) is also an episode boundary: running episodes are cut
(a truncation, bootstrapped through) and the envs reset with a seed derived from the number of
cuts (tests/test_resume.py). A checkpoint off the schedule (SIGTERM, the last step, an early stop)
is where an uninterrupted run cuts nothing, so it cuts nothing either: it saves the running
episodes (the agent's partial data and the actions since the envs' last reset), and a run resumed
from it replays those actions to put the envs back where they stood (`Driver.restore`).
With MultiWorkerMirroredStrategy every worker runs the loop on its own envs and replay; only the
chief writes the run dir, the others a scratch dir (docs/distributed.md).
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from rl.agents.build import build_agent
from rl.distribute import WorkerRole, all_workers_agree, worker_role
from rl.distribute.strategies import shared_strategy
from rl.engines.base import CheckpointParts, EvalRequest, Iteration, OneAgentEngine
from rl.envs import make_vector_env
from rl.envs.reward_augmentation import reward_augmentation_from_hparams
from rl.errors import UserError
from rl.evaluation import EvalResult, eval_env_kwargs, evaluate, fresh_episode_policy, make_eval_env
from rl.hparams import HParams
from rl.memory.array_state import under_prefix, with_prefix
from rl.rollout.driver import Driver
from rl.utils.checkpoint import CheckpointStore
from rl.utils.files import join
from rl.utils.logger import TensorBoardSink
from rl.utils.seeding import derive_seed
from rl.utils.video import (
    VideoRecorder,
    check_render_possible,
    play_episode,
    use_offscreen_rendering,
    write_frame_strip_summary,
)


def make_render_env(hparams: HParams, render_mode: str):
    """One plain env that renders (a vector env's last frame would show the next episode)."""
    use_offscreen_rendering()
    vec_env, _ = make_vector_env(
        hparams.env,
        1,
        0,
        env_kwargs={**eval_env_kwargs(hparams), "render_mode": render_mode},
        max_episode_steps=hparams.max_episode_steps,
    )
    env = vec_env.envs[0]
    message = check_render_possible(render_mode, env.metadata.get("render_modes"))
    if message:
        vec_env.close()
        raise UserError(f"env {hparams.env!r}: {message}")
    return vec_env, env


def video_recorder(run_dir: str, env) -> VideoRecorder:
    return VideoRecorder(join(run_dir, "videos"), fps=env.metadata.get("render_fps", 30))


class InProcessEngine(OneAgentEngine):
    """One run (seed) trained in this process: `Driver` collects, the agent updates."""

    def __init__(
        self,
        hparams: HParams,
        run,
        record_video: bool = False,
        strategy: str = "default",
        num_workers: int = 1,
    ) -> None:
        hp = self.hp = hparams
        self.seed = run.seed
        self.num_workers = num_workers  # processes the training env copies are split over
        self.strategy = shared_strategy(strategy)
        self.role: WorkerRole = worker_role(self.strategy)
        self.scratch_dir: str | None = None
        if not self.role.is_chief:  # writes a scratch dir, removed in `close`
            self.scratch_dir = self.role.scratch_dir()
            run.write_to(self.scratch_dir)
            run.console_label = f"{run.label} worker {self.role.index}"
        self.write_dir = run.write_dir
        # Workers evaluate alike and vote on SIGTERM together (`agree_to_stop`).
        self.evaluation_interruptible = not self.role.multi_worker
        self.env, spec = make_vector_env(
            hp.env,
            hp.num_envs,
            self._train_env_seed(0),
            env_kwargs=hp.env_kwargs,
            max_episode_steps=hp.max_episode_steps,
            reward_augmentation=reward_augmentation_from_hparams(hp),
            num_workers=num_workers,
        )
        self.open_eval_env()
        distribute = None if strategy == "default" else self.strategy
        self.agent = build_agent(hp, spec, self.seed, distribute, *self._worker_names())
        self.checkpoint = tf.train.Checkpoint(agent=self.agent)
        self.driver = Driver(self.env, spec, self.agent, replayable=not self.role.multi_worker)
        # The running episodes a SIGTERM checkpoint saves, or a restored one to resume.
        self.in_flight: dict[str, np.ndarray] | None = None
        self.video: tuple | None = None  # (render vec env, render env, recorder) when recording
        if record_video:
            render_vec_env, render_env = make_render_env(hp, "rgb_array")
            self.video = (render_vec_env, render_env, video_recorder(self.write_dir, render_env))
        self.run = run  # its TensorBoard sink takes the evaluation videos' frame strips
        self._life_returns: list[float] = []  # Atari: per-life returns since the last log point

    def _worker_names(self) -> tuple:
        """Folded into a non-chief worker's seeds, so each worker has its own data."""
        return () if self.role.is_chief else ("worker", self.role.index)

    def _train_env_seed(self, cuts: int) -> int:
        return derive_seed(self.seed, "train_env", cuts, *self._worker_names())

    # -------------------------------------------------------------------------- protocol
    def start(self, states: Sequence[dict[str, Any]]) -> None:
        (state,) = states
        if self.role.multi_worker:
            # A barrier: every worker has read the run dir before the chief writes to it.
            all_workers_agree(self.strategy, True)
            if not self.role.is_chief:  # explore differently from the chief (same weights)
                names = (*self._worker_names(), state["env_steps"])
                self.agent.generator.reset_from_seed(derive_seed(self.seed, "agent", *names))
        seed = self._train_env_seed(state["cuts"])
        if self.in_flight is None:
            self.driver.reset(seed)
        elif not self.driver.restore(seed, self.in_flight):
            print(
                f"[{self.run.label}] the env did not replay to where it stopped (it is not "
                "deterministic): its episodes are cut here, so this run will differ from an "
                "uninterrupted one"
            )
            self.prepare_checkpoint(0, state)
            self.checkpoint_written(0, state)
        self.in_flight = None

    def iterate(self, active: Sequence[bool]) -> list[Iteration]:
        hp, agent, driver = self.hp, self.agent, self.driver
        remaining = hp.train_steps - int(agent.env_steps.numpy())
        vector_steps = min(agent.steps_per_iteration, math.ceil(remaining / hp.num_envs))
        driver.collect(vector_steps)
        metrics = dict(agent.update())
        returns, lengths = driver.stats.pop()
        if driver.spec.reports_game_score:  # Atari: logged per log window (`log_metrics`)
            self._life_returns.extend(returns)
        steps = int(agent.env_steps.numpy())
        return [Iteration.from_episodes(steps, metrics, returns, lengths)]

    def log_metrics(self, index: int) -> dict[str, float]:
        """Also, on Atari, the games of the whole log window: one iteration ends too few (3-6)."""
        metrics = super().log_metrics(index)
        game_scores = self.driver.stats.pop_game_scores()
        if game_scores:
            metrics["train/raw_score_mean"] = float(np.mean(game_scores))
            metrics["train/games"] = float(len(game_scores))
        if self._life_returns:
            metrics["train/clipped_return_mean"] = float(np.mean(self._life_returns))
            self._life_returns = []
        return metrics

    def evaluate(self, requests: Sequence[EvalRequest]) -> list[EvalResult]:
        (request,) = requests
        result = self.evaluate_agent(request.seed)
        if self.video is not None and request.number % self.hp.eval.video_every == 0:
            # Film the evaluation's first episode: a single env reset with the same seed replays
            # exactly the episode env copy 0 of the eval vector env played.
            _, render_env, recorder = self.video
            policy = fresh_episode_policy(self.agent)
            episode = play_episode(render_env, policy, seed=request.seed, full_game=self.full_games)
            recorder.record_episode(episode.frames, request.env_steps, 0, "eval")
            writer = self.run.tensorboard.writer("eval")
            write_frame_strip_summary(episode.frames, request.env_steps, writer)
        return [result]

    def agree_to_stop(self, requested: bool) -> bool:
        if not self.role.multi_worker:
            return requested
        # A preempted worker (its own Pod got SIGTERM) stops every worker, at the same step.
        return not all_workers_agree(self.strategy, not requested)

    def checkpoint_parts(self, index: int) -> CheckpointParts:
        parts = super().checkpoint_parts(index)
        if self.in_flight is not None:
            parts.numpy_state |= with_prefix("driver/", self.in_flight)
        return parts

    def load_numpy_state(self, index: int, state: dict[str, np.ndarray]) -> None:
        self.in_flight = under_prefix("driver/", state) or None
        self.agent.load_numpy_state(state)

    def prepare_checkpoint(self, index: int, state: dict[str, Any]) -> None:
        # Cut the running episodes (see the module docstring); the envs restart after saving.
        self.agent.end_all_episodes()
        state["cuts"] += 1

    def prepare_off_schedule_checkpoint(self, index: int, state: dict[str, Any]) -> None:
        if self.role.multi_worker:  # only the chief saves: the other workers' envs are lost
            self.prepare_checkpoint(index, state)
            return
        self.in_flight = self.driver.snapshot()  # saved by `checkpoint_parts`

    def checkpoint_written(self, index: int, state: dict[str, Any]) -> None:
        if self.in_flight is None:  # the episodes were cut
            self.driver.reset(self._train_env_seed(state["cuts"]))
        self.in_flight = None

    def close(self) -> None:
        self.env.close()
        self.eval_env.close()
        if self.video is not None:
            self.video[0].close()
        if self.scratch_dir is not None:
            shutil.rmtree(self.scratch_dir, ignore_errors=True)


def play_test(
    hparams: HParams,
    run_dir: str,
    seed: int,
    checkpoint: tuple[CheckpointStore, dict],
    test_seed: int,
    tensorboard: TensorBoardSink,
    episodes: int,
    render: bool = False,
    record_video: bool = False,
) -> tuple[EvalResult, int]:
    """Test mode on a Python env: episodes of `checkpoint` (store, pointer), maybe rendered."""
    env, spec = make_eval_env(hparams, episodes, derive_seed(seed, "test_env"))
    agent = build_agent(hparams, spec, seed)
    store, pointer = checkpoint
    store.restore(tf.train.Checkpoint(agent=agent), pointer)
    full_games = spec.reports_game_score
    result = evaluate(agent, env, test_seed, hparams.eval.epsilon, full_games=full_games)
    env.close()
    modes = [m for m, on in (("human", render), ("rgb_array", record_video)) if on]
    for mode in modes:
        render_vec_env, render_env = make_render_env(hparams, mode)
        recorder = video_recorder(run_dir, render_env)
        for i in range(episodes):  # seed test_seed + i replays row i of the test table
            policy = fresh_episode_policy(agent)
            episode = play_episode(render_env, policy, seed=test_seed + i, full_game=full_games)
            if mode == "rgb_array":
                path = recorder.record_episode(episode.frames, pointer["step"], i, "test")
                write_frame_strip_summary(episode.frames, i, tensorboard.writer("test"))
                print(f"[{run_dir.rstrip('/').split('/')[-1]}] video {path}")
        render_vec_env.close()
    return result, pointer["step"]
