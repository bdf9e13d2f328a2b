"""train.py on real Atari ROMs (a few hundred steps): raw and clipped numbers in progress.csv and
TensorBoard, the evaluation protocol in the manifest and as a text summary, and the DQN replay
checkpoint holding single uint8 frames.

Shares the `trained_run` fixture with tests/test_train_smoke.py, which runs every `*_tiny` set
(these two included) through train.py: in one pytest session each set trains once.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from conftest import describe

from rl import registry
from rl.utils.checkpoint import read_numpy_state

TRAINED_SET = "dqn_atari_tiny"  # the shared run of the test without an hparams_set


def summaries(event_dir: Path) -> dict[str, tuple[str, object]]:
    """{tag: (plugin name, last value)} over the event files of `event_dir`."""
    out: dict[str, tuple[str, object]] = {}
    for path in sorted(event_dir.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                out[value.tag] = (value.metadata.plugin_data.plugin_name, value.tensor)
    return out


@pytest.mark.parametrize("hparams_set", ["dqn_atari_tiny", "ppo_atari_tiny"])
def test_atari_run_logs_raw_and_clipped_numbers(hparams_set, trained_run):
    output_dir, _, proc = trained_run(hparams_set)
    assert proc.returncode == 0, describe(proc)
    run_dir = output_dir / "run_0"
    hparams = registry.get_hparams(hparams_set)()

    with open(run_dir / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["env_steps"]) for r in rows] == [128, 256]
    for row in rows:
        raw, clipped = float(row["eval_raw_score_mean"]), float(row["eval_clipped_return_mean"])
        # Pong and Breakout scores are whole points; a game's raw score is the headline.
        assert raw == float(row["eval_return_mean"]) and raw == int(raw)
        if "Breakout" in hparams.env:  # lives, non-negative rewards: per-life clipped <= game
            assert 0 <= clipped <= raw
        else:  # Pong: no lives, rewards already +-1, one episode per game
            assert clipped == raw
    # Games are capped at max_episode_steps=100 (50 for PPO), so some end while training.
    assert any(r["train_raw_score_mean"] != "" for r in rows)

    eval_tags = summaries(run_dir / "eval")
    for tag in ("return_mean", "raw_score_mean", "raw_score_std", "clipped_return_mean"):
        assert eval_tags[tag][0] == "scalars", sorted(eval_tags)
    plugin, tensor = eval_tags["protocol"]
    assert plugin == "text"
    protocol_text = tf.make_ndarray(tensor).item().decode()
    protocol = json.loads(protocol_text.strip("`\n"))
    assert protocol["epsilon"] == hparams.eval.epsilon
    assert protocol["sticky_actions"] is True and protocol["max_episode_steps"] == 40
    assert protocol["env_kwargs"]["terminal_on_life_loss"] is True
    assert protocol["env_kwargs"]["fire_reset"] is True  # both games wait for FIRE
    assert protocol["step_budget"] is None  # the published protocol: games are never cut
    train_tags = summaries(run_dir / "train")
    assert train_tags["raw_score_mean"][0] == "scalars", sorted(train_tags)

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["evaluation_protocol"] == hparams.eval.to_dict()
    assert manifest["evaluation_protocol"]["epsilon"] == hparams.eval.epsilon


def scalar_series(event_dir: Path, tag: str) -> dict[int, float]:
    """{step: value} of one scalar tag over the event files of `event_dir`."""
    out: dict[int, float] = {}
    for path in sorted(event_dir.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag == tag:
                    out[int(event.step)] = float(tf.make_ndarray(value.tensor))
    return out


def test_training_games_are_counted_over_the_whole_log_window(tmp_path, train_here):
    # Games capped at 20 agent steps; 2 envs x 32 steps an iteration; a log point every 128
    # agent steps (2 iterations), where the checkpoint also restarts the envs. Each env copy
    # ends games at its steps 20, 40 and 60 of a window: 6 games a window, 2 in its first
    # iteration and 4 in its second (what the last iteration alone would report).
    override = "max_episode_steps=20,log_every=128"
    args = ["--hparams", "ppo_atari_tiny", "--output_dir", tmp_path, "--hparam_override", override]
    proc = train_here(args)
    assert proc.returncode == 0, describe(proc)
    train_dir = tmp_path / "run_0" / "train"
    assert scalar_series(train_dir, "games") == {128: 6.0, 256: 6.0}
    assert sorted(scalar_series(train_dir, "raw_score_mean")) == [128, 256]


def test_dqn_atari_checkpoint_stores_each_frame_once(trained_run):
    output_dir, _, proc = trained_run("dqn_atari_tiny")
    assert proc.returncode == 0, describe(proc)
    pointer = json.loads((output_dir / "run_0" / "checkpoints" / "latest.json").read_text())
    path = output_dir / "run_0" / "checkpoints" / pointer["directory"]
    saved = read_numpy_state(str(path))
    frames = saved["replay/frames"]
    kinds = saved["replay/kind"]
    assert "replay/obs" not in saved and "replay/next_obs" not in saved
    # One 84x84 uint8 frame per row; 256 steps = 256 obs rows plus, per episode, 3 padding rows
    # (the first stack's older frames) and one final row.
    assert frames.dtype == np.uint8 and frames.shape[2:] == (84, 84)
    assert int((kinds == 1).sum()) == 256
    episodes = int((kinds == 2).sum())
    assert int((kinds == 0).sum()) == 3 * episodes
    assert frames.shape[1] == 256 + 4 * episodes
