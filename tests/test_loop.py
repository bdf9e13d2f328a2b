"""The one training loop (`rl.loop`) with a scripted engine: its cadence, stop rule, callbacks
and resume, independent of any agent or env."""

from __future__ import annotations

import csv
import json
import os
import signal

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401  (fills the registries)
from rl import loop, registry
from rl.engines.base import CheckpointParts, Engine, Iteration
from rl.errors import Diverged, Preempted
from rl.evaluation import EvalResult
from rl.preemption import PreemptionNotice


def hparams(train_steps: int = 100, stop_at: float | None = None):
    hp = registry.get_hparams("dqn_tiny")()
    hp.train_steps = train_steps
    hp.eval.every_steps = 30
    hp.checkpoint_every = 40
    hp.log_every = 20
    hp.keep_checkpoints = 10
    hp.stop_at_eval_return = stop_at
    return hp.freeze()


class ScriptedEngine(Engine):
    """Each run advances 10 env steps per iteration and finishes one 5-step episode of return
    1; evaluation returns follow `eval_returns[run]` (one per evaluation, in order)."""

    def __init__(self, runs, eval_returns, losses=None, weights=None, on_evaluate=None):
        self.steps = [tf.Variable(0, dtype=tf.int64) for _ in runs]
        self.losses = losses or {}  # env step -> train/loss reported at it (default 0.5)
        self.weights = weights or {}  # env step -> value of a parameter from then on
        self.weight = tf.Variable(1.0)
        self.on_evaluate = on_evaluate  # called inside `evaluate` (e.g. a SIGTERM arriving)
        self.eval_returns = eval_returns
        self.evaluated: list[tuple[int, int, int]] = []  # (run, number, env step)
        self.saved: list[tuple[int, int]] = []
        self.started_with: list[int] = []

    def checkpoint_parts(self, index):
        return CheckpointParts(tf.train.Checkpoint(steps=self.steps[index]))

    def policy_checkpoint(self, index):
        return tf.train.Checkpoint(steps=self.steps[index])

    def start(self, states):
        self.started_with = [state["env_steps"] for state in states]

    def iterate(self, active):
        out = []
        for step in self.steps:
            step.assign_add(10)
            now = int(step.numpy())
            if now in self.weights:
                self.weight.assign(self.weights[now])
            loss = self.losses.get(now, 0.5)
            out.append(Iteration(now, {"train/loss": loss}, 1, 1.0, 5.0))
        return out

    def nonfinite_parameter(self, index):
        return None if np.isfinite(self.weight.numpy()) else "weight:0"

    def evaluate(self, requests):
        if self.on_evaluate is not None:
            self.on_evaluate()
        results = []
        for request in requests:
            self.evaluated.append((request.index, request.number, request.env_steps))
            value = self.eval_returns[request.index][request.number]
            results.append(EvalResult(np.full(2, value), np.full(2, 7)))
        return results

    def checkpoint_written(self, index, state):
        self.saved.append((index, state["env_steps"]))

    def log_metrics(self, index):
        return {"train/learning_rate": 0.1}


def train(tmp_path, hp, eval_returns, callbacks=(), copies=1, preemption=None, **engine):
    engines = []

    def build(runs):
        engines.append(ScriptedEngine(runs, eval_returns, **engine))
        return engines[-1]

    run_dirs = [str(tmp_path / f"run_{i}") for i in range(copies)]
    results = loop.train(
        hp, run_dirs, list(range(copies)), "dqn_tiny", build,
        group_runs=lambda runs: [[run for run in runs if not run.already_complete]],
        callbacks=callbacks, preemption=preemption,
    )  # fmt: skip
    return results, engines


def progress(tmp_path, run=0):
    with open(tmp_path / f"run_{run}" / "progress.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_the_cadence_of_evaluations_checkpoints_and_logs(tmp_path):
    results, (engine,) = train(tmp_path, hparams(), [[1.0, 2.0, 3.0, 4.0]])
    # every_steps 30 with 10-step iterations: evaluations at 30, 60, 90 and the end (100).
    assert engine.evaluated == [(0, 0, 30), (0, 1, 60), (0, 2, 90), (0, 3, 100)]
    assert engine.saved == [(0, 40), (0, 80), (0, 100)]  # checkpoint_every 40, and the end
    (result,) = results
    assert (result.env_steps, result.last_eval_return, result.already_complete) == (100, 4.0, False)
    rows = progress(tmp_path)
    assert [int(r["env_steps"]) for r in rows] == [30, 60, 90, 100]
    assert [float(r["eval_return_mean"]) for r in rows] == [1.0, 2.0, 3.0, 4.0]
    # One 5-step episode of return 1 per iteration: the means since the last log point.
    assert {float(r["train_return_mean"]) for r in rows} == {1.0}
    state = json.loads((tmp_path / "run_0/checkpoints/step_000000000100/trainer.json").read_text())
    assert state["episodes"] == 10 and state["evaluations"] == 4


def test_stop_at_eval_return_stops_at_the_first_evaluation_that_reaches_it(tmp_path):
    results, (engine,) = train(tmp_path, hparams(stop_at=2.5), [[1.0, 3.0, 9.0, 9.0]])
    assert engine.evaluated == [(0, 0, 30), (0, 1, 60)]
    assert engine.saved == [(0, 40), (0, 60)]  # the stop writes the last checkpoint
    assert results[0].first_step_at_threshold == 60 and results[0].env_steps == 60


def test_an_evaluation_callback_stops_one_run_and_the_other_goes_on(tmp_path):
    seen = []

    def prune(run, step, metrics):
        seen.append((run.label, step, metrics["eval/return_mean"]))
        return loop.STOP if run.label == "run_1" and step >= 60 else loop.CONTINUE

    returns = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    results, (engine,) = train(tmp_path, hparams(), returns, callbacks=[prune], copies=2)
    assert [r.env_steps for r in results] == [100, 60]
    assert ("run_1", 60, 6.0) in seen and not any(s[0] == "run_1" and s[1] > 60 for s in seen)
    assert (1, 60) in engine.saved  # the stopped run's last checkpoint
    # A resume treats the stopped run as complete; the other one too.
    again, engines = train(tmp_path, hparams(), returns, callbacks=[prune], copies=2)
    assert [r.already_complete for r in again] == [True, True] and engines == []


def test_a_resume_continues_the_cadence_from_the_checkpoint(tmp_path):
    train(tmp_path, hparams(train_steps=40), [[1.0, 2.0]])
    results, (engine,) = train(tmp_path, hparams(train_steps=100), [[1.0, 2.0, 3.0, 4.0, 5.0]])
    assert engine.started_with == [40]
    # Restored: the step (40) and the evaluation counter (2: at 30 and at the end, 40).
    assert engine.evaluated == [(0, 2, 60), (0, 3, 90), (0, 4, 100)]
    rows = progress(tmp_path)
    assert [int(r["env_steps"]) for r in rows] == [30, 40, 60, 90, 100]
    assert results[0].env_steps == 100


class Killed(BaseException):
    """Where the process dies: nothing after it runs (BaseException: no handler takes it)."""


def test_a_population_resumes_a_member_completed_before_the_kill_with_the_others(tmp_path):
    """A population trains as one program (`rl.tune.pbt.resume_together`): a kill between its
    members' last checkpoints leaves one complete, which resumes with the other from its kept
    checkpoint at their step; once both are complete, nothing trains."""
    from rl.tune.pbt import resume_together

    class KilledAfterTheFirstLastCheckpoint(ScriptedEngine):
        def checkpoint_written(self, index, state):
            super().checkpoint_written(index, state)
            if state["env_steps"] == 100:
                raise Killed

    returns = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    engines = []

    def train_population(engine_class):
        def build(runs):
            engines.append(engine_class(runs, returns))
            return engines[-1]

        run_dirs = [str(tmp_path / f"run_{i}") for i in range(2)]
        return loop.train(
            hparams(), run_dirs, [0, 1], "dqn_tiny", build, group_runs=resume_together
        )

    with pytest.raises(Killed):
        train_population(KilledAfterTheFirstLastCheckpoint)
    assert engines[0].saved[-2:] == [(1, 80), (0, 100)] and _latest_step(tmp_path, 1) == 80
    results = train_population(ScriptedEngine)
    assert engines[1].started_with == [80, 80]  # run_0 complete at 100, back at its 80
    assert engines[1].evaluated == [(0, 2, 90), (1, 2, 90), (0, 3, 100), (1, 3, 100)]
    assert [(r.env_steps, r.already_complete) for r in results] == [(100, False)] * 2
    for run in (0, 1):  # as uninterrupted: every evaluation once
        assert [float(r["eval_return_mean"]) for r in progress(tmp_path, run)] == returns[run]
    again = train_population(ScriptedEngine)
    assert len(engines) == 2 and [r.already_complete for r in again] == [True, True]


def _latest_step(tmp_path, run=0):
    return json.loads((tmp_path / f"run_{run}/checkpoints/latest.json").read_text())["step"]


def test_a_nonfinite_loss_stops_the_run_unsaved(tmp_path, capsys):
    with pytest.raises(Diverged, match=r"run_0 diverged at 50 env steps \(non-finite train/loss"):
        train(tmp_path, hparams(), [[1.0] * 4], losses={50: float("nan")})
    out = capsys.readouterr().out
    assert "[run_0] stopped: run_0 diverged at 50 env steps" in out
    assert "(40 env steps)" in out  # the last good checkpoint, which stays the latest
    assert _latest_step(tmp_path) == 40


def test_a_nonfinite_parameter_is_never_checkpointed(tmp_path):
    # The weight turns infinite at 70; the loss stays finite; the checkpoint due at 80 is refused.
    with pytest.raises(Diverged, match=r"at 80 env steps \(non-finite parameter weight:0\)"):
        train(tmp_path, hparams(), [[1.0] * 4], weights={70: float("inf")})
    assert _latest_step(tmp_path) == 40


def test_halt_on_nonfinite_false_trains_on(tmp_path):
    hp = registry.get_hparams("dqn_tiny")()
    hp.train_steps, hp.eval.every_steps, hp.checkpoint_every = 100, 30, 40
    hp.halt_on_nonfinite = False
    results, _ = train(tmp_path, hp.freeze(), [[1.0] * 4], losses={50: float("nan")})
    assert results[0].env_steps == 100 and _latest_step(tmp_path) == 100


def test_an_evaluation_abandoned_at_a_scheduled_checkpoint_runs_first_on_resume(tmp_path):
    # Evaluations every 30, checkpoints every 40: both fall on 120, where SIGTERM arrives during
    # the evaluation. The scheduled checkpoint at 120 is the one the resumed run starts from.
    notice = PreemptionNotice(grace_seconds=60)
    with notice.installed():
        calls = []

        def on_evaluate():
            calls.append(1)
            if len(calls) == 4:  # the fourth evaluation (at 120)
                os.kill(os.getpid(), signal.SIGTERM)

        with pytest.raises(Preempted):
            train(tmp_path, hparams(train_steps=200), [[1.0] * 8], preemption=notice,
                  on_evaluate=on_evaluate)  # fmt: skip
    assert _latest_step(tmp_path, 0) == 120
    results, (engine,) = train(tmp_path, hparams(train_steps=200), [[1.0] * 8])
    assert engine.started_with == [120] and results[0].env_steps == 200
    assert engine.evaluated[:2] == [(0, 3, 120), (0, 4, 150)]


def test_sigterm_saves_every_run_where_it_stands_and_raises_preempted(tmp_path, capsys):
    notice = PreemptionNotice(grace_seconds=60)
    # SIGTERM arrives during the evaluation at 60: it is abandoned, both runs save at 60.
    with notice.installed():
        sigterm = lambda: os.kill(os.getpid(), signal.SIGTERM)  # noqa: E731
        calls = []

        def on_evaluate():
            calls.append(1)
            if len(calls) == 2:  # the second evaluation (at 60)
                sigterm()

        with pytest.raises(Preempted):
            train(tmp_path, hparams(), [[1.0] * 4] * 2, copies=2, preemption=notice,
                  on_evaluate=on_evaluate)  # fmt: skip
    out = capsys.readouterr().out
    assert "[run_0] SIGTERM: checkpoint at 60 env steps" in out
    assert "[run_1] SIGTERM: checkpoint at 60 env steps" in out
    assert _latest_step(tmp_path, 0) == 60 and _latest_step(tmp_path, 1) == 60
    # The abandoned evaluation is not counted (nor recorded): only the one at 30 was.
    state = json.loads((tmp_path / "run_0/checkpoints/step_000000000060/trainer.json").read_text())
    assert state["evaluations"] == 1 and state["env_steps"] == 60
    # The same command continues from there, with the evaluation owed at 60 first, as number 1
    # (its seed), as an uninterrupted run has it.
    results, (engine,) = train(tmp_path, hparams(), [[1.0] * 5] * 2, copies=2)
    assert engine.started_with == [60, 60] and [r.env_steps for r in results] == [100, 100]
    assert engine.evaluated[:2] == [(0, 1, 60), (1, 1, 60)]
    assert [e[1:] for e in engine.evaluated if e[0] == 0] == [(1, 60), (2, 90), (3, 100)]
