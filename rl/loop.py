"""The one training loop: what is the same whatever engine trains (resuming, run files, the
cadence of evaluation, logging and checkpoints, stopping, callbacks, SIGTERM, divergence;
docs/architecture.md, "The one loop"). An engine turns env steps into updates; test mode is
rl.test_mode.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from rl.engines.base import Engine, EvalRequest, Iteration
from rl.errors import ActorsUnavailable, Diverged, Preempted
from rl.evaluation import EvalResult, write_protocol_summary
from rl.hparams import HParams
from rl.preemption import Abandoned, PreemptionNotice
from rl.utils import compile_cache
from rl.utils.checkpoint import CheckpointStore
from rl.utils.checkpoint_choice import best_evaluation
from rl.utils.files import join, read_json
from rl.utils.logger import ConsoleSink, CSVSink, Logger, TensorBoardSink
from rl.utils.run_dir import BEST_DIR, manifest, run_label, write_run_files
from rl.utils.seeding import derive_seed

CONTINUE, STOP = "continue", "stop"


@dataclass
class TrainResult:
    env_steps: int
    wall_seconds: float
    last_eval_return: float | None
    first_step_at_threshold: int | None
    already_complete: bool


def initial_state() -> dict[str, Any]:
    """The loop's counters, saved with every checkpoint (trainer.json)."""
    return {
        "env_steps": 0,
        "episodes": 0,
        "cuts": 0,
        "evaluations": 0,
        "evaluation_owed": False,  # a SIGTERM abandoned the evaluation due at `env_steps`
        "wall_seconds": 0.0,
        "last_eval_return": None,
        "first_step_at_threshold": None,
        "first_wall_at_threshold": None,
        "stopped_early": False,
        "best_eval": None,  # the best evaluation so far: step, return_mean, return_std, episodes
    }


class EvaluationCallback(Protocol):
    def __call__(self, run: Run, step: int, metrics: dict[str, float]) -> str | None: ...


def next_multiple(step: int, every: int) -> int:
    """The first multiple of `every` above `step`: when a cadence fires next."""
    return (step // every + 1) * every


def copy_index(label: str) -> int:
    try:
        return int(label.rsplit("_", 1)[1])
    except (IndexError, ValueError):
        return 0


class Run:
    """One copy of an experiment: its run dir, seed, checkpoints, counters and sinks."""

    def __init__(
        self,
        hparams: HParams,
        run_dir: str,
        seed: int,
        hparams_set: str,
        extra_state: dict[str, Any] | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> None:
        self.hp = hparams
        self.run_dir = run_dir
        self.write_dir = run_dir
        self.seed = seed
        self.hparams_set = hparams_set
        self.overrides = overrides  # the command line's changes to the set (manifest.json)
        self.label = run_label(run_dir)
        self.console_label = self.label
        self.store = CheckpointStore(join(run_dir, "checkpoints"), hparams.keep_checkpoints)
        self.save_store = self.store
        # The best-evaluated policy (`keep_best`): its own store, never pruned by the other.
        self.best_store = CheckpointStore(join(run_dir, BEST_DIR), 1)
        self.logger: Logger | None = None  # the sinks, once `open` wrote the run files
        self.pointer = self.store.latest()
        self.saved_step = None if self.pointer is None else int(self.pointer["step"])
        self.diverged: str | None = None  # why it stopped unsaved (`halt_on_nonfinite`)
        self.state = {**initial_state(), **(extra_state or {})}
        if self.pointer is not None:
            directory = join(self.store.directory, self.pointer["directory"])
            self.state.update(read_json(join(directory, "trainer.json")))
        self.already_complete = self.pointer is not None and self.done
        if self.already_complete:
            print(
                f"[{self.label}] already complete at {self.state['env_steps']:,} env steps "
                f"(last eval {self.state['last_eval_return']}); nothing to do"
            )

    @property
    def done_training(self) -> bool:
        return self.state["env_steps"] >= self.hp.train_steps

    @property
    def done(self) -> bool:
        return self.done_training or self.state["stopped_early"] or self.diverged is not None

    def write_to(self, write_dir: str) -> None:
        """Writes go to `write_dir` (a non-chief worker's scratch dir) from now on."""
        self.write_dir = write_dir
        self.save_store = CheckpointStore(join(write_dir, "checkpoints"), self.store.keep)
        self.best_store = CheckpointStore(join(write_dir, BEST_DIR), 1)

    def open(self, engine_manifest: dict[str, Any], progress_sink) -> None:
        """Writes the run files, opens the sinks, starts the cadence counters."""
        hp = self.hp
        run_manifest = manifest(self.seed, copy_index(self.label), self.hparams_set, self.overrides)
        write_run_files(self.write_dir, hp, {**run_manifest, **engine_manifest})
        self.tensorboard = TensorBoardSink(self.write_dir)
        if self.pointer is None:
            self.tensorboard.write_hparams(hp.flat_scalars(), trial_id=self.label)
            write_protocol_summary(self.tensorboard.writer("eval"), hp)
        steps = self.state["env_steps"]
        csv_path = join(self.write_dir, "progress.csv")
        progress = progress_sink(csv_path, steps) or CSVSink(csv_path, resume_at_step=steps)
        self.logger = Logger([self.tensorboard, progress])
        self.console = ConsoleSink(hp.train_steps, self.console_label)
        owed = self.state["evaluation_owed"]
        self.next_eval = steps if owed else next_multiple(steps, hp.eval.every_steps)
        self.next_checkpoint = next_multiple(steps, hp.checkpoint_every)
        self.next_log = next_multiple(steps, hp.log_every)
        self.wall_start = time.monotonic() - self.state["wall_seconds"]
        self.now = self.rate_start = time.monotonic()
        self.rate_steps, self.steps_per_second = steps, 0.0
        # Episodes ended since the last log point: count, return sum, length sum.
        self.episode_totals = np.zeros(3)

    def tick(self) -> None:
        self.state["wall_seconds"] = time.monotonic() - self.wall_start

    def close(self) -> None:
        if self.logger is None:  # never opened
            return
        self.logger.close()
        if self.state["stopped_early"] and self.state.get("stopped_by") is None:
            print(
                f"[{self.label}] eval return {self.state['last_eval_return']:.1f} reached "
                f"stop_at_eval_return={self.hp.stop_at_eval_return}: stopped at "
                f"{self.state['env_steps']:,} env steps"
            )

    def result(self) -> TrainResult:
        keys = ("env_steps", "wall_seconds", "last_eval_return", "first_step_at_threshold")
        return TrainResult(
            **{key: self.state[key] for key in keys}, already_complete=self.already_complete
        )


EngineFactory = Callable[[list[Run]], Engine]


def train(
    hparams: HParams,
    run_dirs: Sequence[str],
    seeds: Sequence[int],
    hparams_set: str,
    build_engine: EngineFactory,
    *,
    group_runs: Callable[[list[Run]], list[list[Run]]] | None = None,
    callbacks: Sequence[EvaluationCallback] = (),
    extra_state: dict[str, Any] | None = None,
    preemption: PreemptionNotice | None = None,
    run_hparams: Sequence[HParams] | None = None,
    overrides: dict[str, Any] | None = None,
) -> list[TrainResult]:
    """Trains `run_dirs[i]` with `seeds[i]` (and a population's `run_hparams[i]`) in groups.

    `group_runs` sees every run, the already complete ones too, and returns the groups to
    train: a population that trains as one program resumes a member that completed before a
    kill together with the others (`rl.tune.pbt.resume_together`); other groupings leave it out.
    Without it, each unfinished run trains alone."""
    run_hparams = list(run_hparams or [hparams] * len(run_dirs))
    runs = [
        Run(run_hp, run_dir, seed, hparams_set, extra_state, overrides)
        for run_hp, run_dir, seed in zip(run_hparams, run_dirs, seeds, strict=True)
    ]
    alone = [[run] for run in runs if not run.already_complete]
    groups = group_runs(runs) if group_runs else alone
    preemption = preemption or PreemptionNotice()
    for group in filter(None, groups):
        if preemption.requested:  # the runs not started yet have nothing to save
            raise Preempted(f"SIGTERM: stopped before {group[0].label} started")
        engine = build_engine(group)
        preemption.reclaim()  # a strategy built with the engine may have taken SIGTERM
        compile_cache.activate()  # when asked for (train.py), before the first compile
        try:
            _train_group(hparams, engine, group, callbacks, preemption)
        finally:
            engine.close()
    diverged = [run for run in runs if run.diverged is not None]
    if diverged:
        raise Diverged(
            "; ".join(run.diverged for run in diverged), tuple(run.run_dir for run in diverged)
        )
    return [run.result() for run in runs]


def _train_group(
    hparams: HParams, engine: Engine, runs: list[Run], callbacks, preemption: PreemptionNotice
) -> None:
    """Trains `runs` (all resuming from the same env step) in lockstep until each is done."""
    for i, run in enumerate(runs):
        if run.pointer is not None:
            parts = engine.checkpoint_parts(i)
            numpy_state, run.state = run.store.restore(parts.checkpoint, run.pointer)
            engine.load_numpy_state(i, numpy_state)
            run.state["best_eval"] = best_evaluation(run.best_store)
            steps, note = run.state["env_steps"], engine.resume_note(i)
            print(f"[{run.label}] resuming from checkpoint at {steps:,} env steps{note}")
    engine.start([run.state for run in runs])
    for run in runs:
        run.open(engine.manifest_extras(), engine.progress_sink)
    try:
        # An evaluation that SIGTERM abandoned comes first, at the step where it was due.
        owed = [(i, run) for i, run in enumerate(runs) if run.state["evaluation_owed"]]
        if owed:
            _evaluate_log_and_save(
                engine, owed, dict.fromkeys(range(len(runs)), False), callbacks, preemption
            )
        while any(not run.done for run in runs):
            if engine.agree_to_stop(preemption.requested):
                _checkpoint_and_stop(engine, runs, preemption)
            active = [not run.done for run in runs]
            try:
                iterations = engine.iterate(active)
            except ActorsUnavailable:  # train.py exits with its status, every run saved
                _checkpoint_without_actors(engine, runs)
                raise
            live = [(i, run) for i, run in enumerate(runs) if active[i]]
            advanced = {}
            for i, run in live:
                advanced[i] = _record_iteration(run, iterations[i])
                check_finite_loss(run, iterations[i].metrics)
            live = [(i, run) for i, run in live if run.diverged is None]
            _evaluate_log_and_save(engine, live, advanced, callbacks, preemption)
    finally:
        for run in runs:
            run.close()


def _evaluate_log_and_save(
    engine: Engine,
    live: list[tuple[int, Run]],
    advanced: dict[int, bool],
    callbacks,
    preemption: PreemptionNotice,
) -> None:
    """After an iteration: the due evaluations, the log and progress lines, the checkpoints."""
    due = [
        (i, run) for i, run in live if run.state["env_steps"] >= run.next_eval or run.done_training
    ]
    evaluations = _evaluate(engine, due, callbacks, preemption) if due else {}
    for i, run in live:
        evaluation = evaluations.get(i, {})
        _log(engine, i, run, evaluation)
        if advanced[i] or evaluation:  # no progress line while nothing moves
            speed = {"time/steps_per_second": run.steps_per_second}
            run.console.write({**speed, **evaluation}, run.state["env_steps"])
        # Due but not done: SIGTERM abandoned it, and the next start runs it first.
        run.state["evaluation_owed"] = i in dict(due) and not evaluation
        if run.state["env_steps"] >= run.next_checkpoint or run.done:
            _save(engine, i, run)


def _save(engine: Engine, index: int, run: Run) -> None:
    """Writes run `index`'s checkpoint unless its parameters are not finite. One on the schedule
    (`checkpoint_every`) is one the uninterrupted run makes too; one off it (a SIGTERM, the last
    step, an early stop) is not, and the engine keeps what such a run would carry on with."""
    steps = run.state["env_steps"]
    if steps >= run.next_checkpoint:
        engine.prepare_checkpoint(index, run.state)
    else:
        engine.prepare_off_schedule_checkpoint(index, run.state)
    if run.hp.halt_on_nonfinite:
        bad = engine.nonfinite_parameter(index)
        if bad is not None:
            _diverge(run, f"parameter {bad}")
            return
    parts = engine.checkpoint_parts(index)
    run.save_store.save(steps, parts.checkpoint, parts.numpy_state, dict(run.state))
    run.saved_step = steps
    engine.checkpoint_written(index, run.state)
    run.next_checkpoint = next_multiple(steps, run.hp.checkpoint_every)


def _checkpoint_without_actors(engine: Engine, runs: list[Run]) -> None:
    """No node could hold the actors for --actor_wait_timeout (`ActorsUnavailable`): a
    checkpoint of every run where it stands, as on SIGTERM, so the next start loses nothing."""
    for i, run in enumerate(runs):
        steps = run.state["env_steps"]
        if run.diverged is None and run.saved_step != steps:
            _save(engine, i, run)
        print(f"[{run.label}] no node for the actors: checkpoint at {steps:,} env steps")


def _checkpoint_and_stop(engine: Engine, runs: list[Run], preemption: PreemptionNotice) -> None:
    """SIGTERM: a checkpoint of every run where it stands, then `Preempted`."""
    for i, run in enumerate(runs):
        steps = run.state["env_steps"]
        if run.diverged is None and run.saved_step != steps:
            _save(engine, i, run)
        when = "the signal went to another worker"
        if preemption.requested:
            when = f"{preemption.seconds_since():.1f} s after the signal"
        print(f"[{run.label}] SIGTERM: checkpoint at {steps:,} env steps, {when}")
    raise Preempted("SIGTERM: every run saved its checkpoint")


def check_finite_loss(run: Run, metrics: dict[str, float]) -> None:
    """Stops `run` (unsaved) at its first non-finite loss metric (`halt_on_nonfinite`)."""
    if not run.hp.halt_on_nonfinite:
        return
    for key, value in metrics.items():
        if "loss" in key and not np.isfinite(value):
            _diverge(run, f"{key} = {value}")
            return


def _diverge(run: Run, what: str) -> None:
    """Stops `run` unsaved: its non-finite `what` would only spread."""
    kept = "no checkpoint" if run.saved_step is None else f"{run.saved_step:,} env steps"
    run.diverged = (
        f"{run.label} diverged at {run.state['env_steps']:,} env steps (non-finite {what}); "
        f"its latest checkpoint stays the last good one ({kept}); halt_on_nonfinite=False "
        "trains on regardless"
    )
    print(f"[{run.label}] stopped: {run.diverged}")


def _record_iteration(run: Run, iteration: Iteration) -> bool:
    """Records the iteration; whether the run advanced."""
    state, logger = run.state, run.logger
    advanced = iteration.env_steps > state["env_steps"]
    state["env_steps"] = iteration.env_steps
    run.tick()
    state["episodes"] += iteration.episodes
    run.episode_totals += (
        iteration.episodes,
        iteration.episode_return_sum,
        iteration.episode_length_sum,
    )
    debug = {k: v for k, v in iteration.metrics.items() if k.startswith("debug/")}
    if debug:  # --log_level DEBUG: per-update diagnostics at every update
        run.tensorboard.write(debug, iteration.env_steps)
    logger.record_many({k: v for k, v in iteration.metrics.items() if k not in debug})
    run.now = time.monotonic()
    elapsed = max(run.now - run.rate_start, 1e-9)
    run.steps_per_second = (iteration.env_steps - run.rate_steps) / elapsed
    return advanced


def _evaluate(
    engine: Engine, due: list[tuple[int, Run]], callbacks, preemption: PreemptionNotice
) -> dict[int, dict[str, float]]:
    """The due runs' evaluations; SIGTERM abandons them (the runs save and stop next)."""
    requests = [
        EvalRequest(
            index=i,
            seed=derive_seed(run.seed, "eval", run.state["evaluations"]),
            number=run.state["evaluations"],
            env_steps=run.state["env_steps"],
        )
        for i, run in due
    ]
    try:
        with (
            preemption.interruptible()
            if engine.evaluation_interruptible
            else contextlib.nullcontext()
        ):
            results = engine.evaluate(requests)
    except Abandoned:
        return {}
    out = {}
    for (i, run), result in zip(due, results, strict=True):
        out[i] = metrics = _record_evaluation(run, result)
        _keep_best(engine, i, run, result)
        metrics["eval/best_return_mean"] = run.state["best_eval"]["return_mean"]
        run.logger.record("eval/best_return_mean", metrics["eval/best_return_mean"])
        for callback in callbacks:
            if callback(run, run.state["env_steps"], metrics) == STOP and not run.done:
                run.state["stopped_early"] = True
                run.state["stopped_by"] = getattr(callback, "__name__", type(callback).__name__)
                print(
                    f"[{run.label}] stopped by {run.state['stopped_by']} at "
                    f"{run.state['env_steps']:,} env steps"
                )
    return out


def _record_evaluation(run: Run, result: EvalResult) -> dict[str, float]:
    state, hp = run.state, run.hp
    steps = state["env_steps"]
    state["evaluations"] += 1
    state["evaluation_owed"] = False
    state["last_eval_return"] = result.return_mean
    threshold = hp.stop_at_eval_return
    if threshold is not None and result.return_mean >= threshold:
        if state["first_step_at_threshold"] is None:
            state["first_step_at_threshold"] = steps
        state["stopped_early"] = True
    # Wall time to a threshold includes the evaluation that found it (as in SB3).
    run.tick()
    if state["first_step_at_threshold"] == steps:
        state["first_wall_at_threshold"] = state["wall_seconds"]
    metrics = result.metrics("eval")
    run.logger.record_many(metrics)
    run.next_eval = next_multiple(steps, hp.eval.every_steps)
    return metrics


def _keep_best(engine: Engine, index: int, run: Run, result: EvalResult) -> None:
    """Saves the policy to `checkpoints/best/` when this evaluation beats every earlier one:
    weights only and no episode cut, so it changes nothing in training."""
    best = run.state.get("best_eval")
    if best is not None and result.return_mean <= best["return_mean"]:
        return
    steps = run.state["env_steps"]
    run.state["best_eval"] = evaluation = {
        "step": steps,
        "evaluation": run.state["evaluations"] - 1,  # its number: seed derive_seed(seed, "eval", n)
        "return_mean": result.return_mean,
        "return_std": result.return_std,
        "episodes": len(result.returns),
    }
    run.best_store.save(steps, engine.policy_checkpoint(index), {}, {"evaluation": evaluation})


def _log(engine: Engine, index: int, run: Run, evaluation: dict[str, float]) -> None:
    state, logger = run.state, run.logger
    steps = state["env_steps"]
    logger.record("time/steps_per_second", run.steps_per_second)
    logger.record("time/wall_seconds", state["wall_seconds"])
    if not (steps >= run.next_log or run.done_training or evaluation):
        return
    count, return_sum, length_sum = run.episode_totals
    if count:
        logger.record("train/episode_return", return_sum / count)
        logger.record("train/episode_length", length_sum / count)
        run.episode_totals = np.zeros(3)
    logger.record_many(engine.log_metrics(index))
    logger.record("train/episodes", state["episodes"])
    logger.dump(steps)
    run.next_log = next_multiple(steps, run.hp.log_every)
    run.rate_start, run.rate_steps = run.now, steps
