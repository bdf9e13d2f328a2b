"""Atari learning test (`-m slow`; 11.6 min on 2 cores at load 4-5): `ppo_breakout`, seed 0,
for 500k frames (125k agent steps) with its lr and clip-range schedules rescaled to end there,
as the zoo's `lin_` schedules end at any budget.

What must show: the full games the agent plays while training (train/raw_score_mean: raw
Breakout score through lost lives, sampled actions, sticky actions 0.25, averaged over every
game that ended in the log window, ~50 a window) average >= 2.0 over the last three 10,240-step
windows. They average 1.2-1.3 in the first five windows, and a uniformly random policy scores
about 1.7.

Measured with the same command (2026-11-27): 2.32, 2.31 and 2.55 in those windows (mean 2.39),
49-50 games each. The final evaluation
is not the criterion: at this budget the policy is still near uniform (30 sampled games: 1.6;
docs/evaluation_protocol.md), too close to random to judge.

dqn_pong and ppo_pong have no learning test: Pong shows learning after millions of frames,
hours on this CPU (tests/test_learning_coverage.py lists them with that reason).
"""

from __future__ import annotations

import pytest
import tensorflow as tf
from test_learning import train_and_read_state

from rl import registry

AGENT_STEPS = 125_000
WINDOW = 10_240  # log_every: one train/raw_score_mean per window of agent steps
THRESHOLD = 2.0


def _rescaled_override(agent_steps: int) -> str:
    """`agent_steps` of training, the set's linear lr and clip schedules ending there (as the
    zoo's `lin_` schedules end at any budget); one small evaluation at the end."""
    hp = registry.get_hparams("ppo_breakout")()  # train_every: env steps per rollout
    gradient_steps = agent_steps // hp.train_every * hp.n_epochs * (hp.train_every // hp.batch_size)
    return (
        f"lr=linear({hp.lr.args['start']},0.0,{gradient_steps}),"
        f"clip_range=linear({hp.clip_range.args['start']},0.0,{gradient_steps}),"
        f"train_steps={agent_steps},eval.every_steps={agent_steps},eval.episodes=2,"
        f"checkpoint_every={agent_steps},"
        f"log_every={WINDOW}"
    )


def _raw_scores(train_dir) -> dict[int, float]:
    scores = {}
    for path in sorted(train_dir.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag == "raw_score_mean":
                    scores[event.step] = float(tf.make_ndarray(value.tensor))
    return scores


def test_rescaled_schedules_match_the_benchmark():
    # 125k agent steps of 8 envs x 128 steps, 4 epochs x 4 minibatches: 1952 gradient steps.
    override = _rescaled_override(AGENT_STEPS)
    assert "train_steps=125000" in override
    assert "lr=linear(0.00025,0.0,1952)" in override
    assert "clip_range=linear(0.1,0.0,1952)" in override


@pytest.mark.slow
def test_ppo_breakout_seed0_training_games_beat_random_at_500k_frames(tmp_path):
    state = train_and_read_state(
        tmp_path, "ppo_breakout", 0, _rescaled_override(AGENT_STEPS), timeout=3600
    )
    assert state["env_steps"] == AGENT_STEPS
    scores = _raw_scores(tmp_path / "run_0" / "train")
    windows = [scores[step] for step in sorted(scores) if step % WINDOW == 0]
    assert len(windows) == AGENT_STEPS // WINDOW, sorted(scores)
    last_three = windows[-3:]
    assert sum(last_three) / 3 >= THRESHOLD, windows
