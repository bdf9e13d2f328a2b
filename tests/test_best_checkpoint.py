"""The best-evaluated policy is kept (`checkpoints/best/`): through pruning, ties and resume,
and it is the policy that made the best evaluation (a real dqn_tiny run replays it)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import tensorflow as tf
from test_loop import ScriptedEngine, hparams

import rl  # noqa: F401
from rl import loop, training
from rl.agents.build import build_agent
from rl.errors import UserError
from rl.evaluation import evaluate, make_eval_env
from rl.utils.checkpoint import CheckpointStore
from rl.utils.checkpoint_choice import select_checkpoint
from rl.utils.seeding import derive_seed


def train(tmp_path, hp, eval_returns):
    engines = []

    def build(runs):
        engines.append(ScriptedEngine(runs, eval_returns))
        return engines[-1]

    loop.train(hp, [str(tmp_path / "run_0")], [0], "dqn_tiny", build)
    return engines[0]


def best_record(tmp_path) -> tuple[dict, int]:
    store = CheckpointStore(str(tmp_path / "run_0/checkpoints/best"), 1)
    pointer = store.latest()
    directory = tmp_path / "run_0/checkpoints/best" / pointer["directory"]
    evaluation = json.loads((directory / "trainer.json").read_text())["evaluation"]
    saved_steps = tf.train.load_variable(str(directory / "tf"), "steps/.ATTRIBUTES/VARIABLE_VALUE")
    return evaluation, int(saved_steps)


def test_the_best_is_kept_through_pruning_ties_and_resume(tmp_path):
    hp = hparams(train_steps=60)
    hp = hp.copy()
    hp.keep_checkpoints = 1
    hp.freeze()
    # Evaluations at 30 and 60 (the end): 5 then 5 -> the tie keeps the one at 30.
    train(tmp_path, hp, [[5.0, 5.0]])
    evaluation, saved_steps = best_record(tmp_path)
    assert (evaluation["step"], evaluation["return_mean"], saved_steps) == (30, 5.0, 30)
    assert evaluation["episodes"] == 2 and evaluation["evaluation"] == 0
    # keep_checkpoints=1 pruned the checkpoint at 30; the best (at 30) stays.
    assert not (tmp_path / "run_0/checkpoints/step_000000000030").exists()
    # Resume to 120: evaluations 2.. at 90, 120 return 4 then 7: 4 does not replace the best.
    longer = hp.copy()
    longer.train_steps = 120
    longer.freeze()
    train(tmp_path, longer, [[5.0, 5.0, 4.0, 7.0]])
    evaluation, saved_steps = best_record(tmp_path)
    assert (evaluation["step"], evaluation["return_mean"], saved_steps) == (120, 7.0, 120)
    with open(tmp_path / "run_0/progress.csv", newline="") as f:
        best_column = [float(r["best_eval_return_mean"]) for r in csv.DictReader(f)]
    assert best_column == [5.0, 5.0, 5.0, 7.0]


def test_checkpoint_choice_errors(tmp_path):
    with pytest.raises(UserError, match="has no best checkpoint"):
        select_checkpoint(str(tmp_path), "best")
    with pytest.raises(UserError, match="must be best, latest or an env step"):
        select_checkpoint(str(tmp_path), "newest")


def test_a_real_run_keeps_the_policy_that_made_the_best_evaluation(tmp_path):
    """dqn_tiny, 600 steps, an evaluation every 100: the policy in checkpoints/best/ plays the
    best evaluation's episodes again (same eval env seed and episode seed) to the same return."""
    hp = rl.registry.get_hparams("dqn_tiny")()
    hp.eval.every_steps = 100
    hp.freeze()
    run_dir = str(tmp_path / "run_0")
    training.train(hp, [run_dir], [0], "dqn_tiny")
    with open(tmp_path / "run_0/progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    returns = [float(r["eval_return_mean"]) for r in rows]
    store, pointer = select_checkpoint(run_dir, "best")
    record = json.loads(
        (tmp_path / "run_0/checkpoints/best" / pointer["directory"] / "trainer.json").read_text()
    )["evaluation"]
    assert record["return_mean"] == max(returns)
    assert record["step"] == int(rows[returns.index(max(returns))]["env_steps"])  # the first max
    env, spec = make_eval_env(hp, hp.eval.episodes, derive_seed(0, "eval_env"))
    agent = build_agent(hp, spec, 0)
    store.restore(tf.train.Checkpoint(agent=agent), pointer)
    replayed = evaluate(agent, env, derive_seed(0, "eval", record["evaluation"]), hp.eval.epsilon)
    env.close()
    assert replayed.return_mean == record["return_mean"]
    assert np.std(returns) > 0 or len(returns) == 1  # the evaluations differ: best is a choice
