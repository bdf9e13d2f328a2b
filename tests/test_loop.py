"""The one training loop (`rl.loop`) with a scripted engine: its cadence, stop rule, callbacks
and resume, independent of any agent or env."""

from __future__ import annotations

import csv
import json

import numpy as np
import tensorflow as tf

import rl  # noqa: F401  (fills the registries)
from rl import loop, registry
from rl.engines.base import CheckpointParts, Engine, Iteration
from rl.evaluation import EvalResult


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

    def __init__(self, runs, eval_returns):
        self.steps = [tf.Variable(0, dtype=tf.int64) for _ in runs]
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
            out.append(Iteration(int(step.numpy()), {"train/loss": 0.5}, 1, 1.0, 5.0))
        return out

    def evaluate(self, requests):
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


def train(tmp_path, hp, eval_returns, callbacks=(), copies=1):
    engines = []

    def build(runs):
        engines.append(ScriptedEngine(runs, eval_returns))
        return engines[-1]

    run_dirs = [str(tmp_path / f"run_{i}") for i in range(copies)]
    results = loop.train(
        hp, run_dirs, list(range(copies)), "dqn_tiny", build,
        group_runs=lambda runs: [runs], callbacks=callbacks,
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
