"""train.py dispatches "tf/" envs to the compiled trainer and writes the standard run dir;
a longer --train_steps resumes from the checkpoint; test mode plays in-graph episodes.

(tests/test_train_smoke.py also runs ppo_tf_tiny end to end with --copies 2: COPIES_SETS in
tests/conftest.py.)
"""

from __future__ import annotations

import csv
import json

import tensorflow as tf
from conftest import describe

TINY = "ppo_tf_tiny"


def _tags(event_dir) -> set[str]:
    tags = set()
    for path in sorted(event_dir.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            tags.update(value.tag for value in event.summary.value)
    return tags


def test_train_resume_and_test(tmp_path, train_here):
    out = tmp_path / "out"
    args = ["--hparams", TINY, "--output_dir", out]
    proc = train_here(args)
    assert proc.returncode == 0, describe(proc)
    run = out / "run_0"
    for name in ("hparams.json", "manifest.json", "progress.csv"):
        assert (run / name).is_file(), name
    assert json.loads((run / "manifest.json").read_text())["hparams_set"] == TINY
    pointer = json.loads((run / "checkpoints" / "latest.json").read_text())
    assert pointer["step"] == 256
    state = json.loads((run / "checkpoints" / pointer["directory"] / "trainer.json").read_text())
    assert state["cuts"] == 0  # the compiled path never cuts episodes
    assert state["evaluations"] == 2 and state["episodes"] > 0
    rows = list(csv.DictReader(open(run / "progress.csv")))
    assert [int(r["env_steps"]) for r in rows] == [128, 256]
    train_tags = _tags(run / "train")
    for tag in ("episode_return", "episode_length", "loss", "policy_loss", "value_loss",
                "clip_fraction", "approx_kl", "learning_rate", "clip_range",
                "steps_per_second"):  # fmt: skip
        assert tag in train_tags or f"time/{tag}" in train_tags, (tag, sorted(train_tags))
    assert {"return_mean", "return_std", "length_mean"} <= _tags(run / "eval")
    assert "eval 11" in proc.stdout or "eval " in proc.stdout

    longer = train_here(args + ["--train_steps", "384"])
    assert longer.returncode == 0, describe(longer)
    assert "[run_0] resuming from checkpoint at 256 env steps" in longer.stdout
    rows = list(csv.DictReader(open(run / "progress.csv")))
    assert [int(r["env_steps"]) for r in rows] == [128, 256, 384]
    assert len(json.loads((run / "manifest.json").read_text())["resumed"]) == 1

    tested = train_here(args + ["--training", "False", "--test_episodes", "4"])
    assert tested.returncode == 0, describe(tested)
    assert "[run_0] test return" in tested.stdout and "over 4 episodes" in tested.stdout
    assert "test" in {p.name for p in run.iterdir()}


def test_record_video_is_refused_cleanly(tmp_path, train_here):
    proc = train_here(["--hparams", TINY, "--output_dir", tmp_path / "o", "--record_video", "True"])
    assert proc.returncode == 2, describe(proc)
    assert "cannot render" in proc.stderr
    assert not (tmp_path / "o" / "run_0" / "checkpoints").exists()


def test_unknown_tf_env_is_a_user_error(tmp_path, train_here):
    proc = train_here(["--hparams", TINY, "--output_dir", tmp_path / "o", "--env", "tf/CartPol-v1"])
    assert proc.returncode == 2, describe(proc)
    assert "CartPole" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_normalization_is_refused_on_the_compiled_path(tmp_path, train_here):
    override = ["--hparam_override", "normalize_obs=True,normalize_reward=True"]
    proc = train_here(["--hparams", TINY, "--output_dir", tmp_path / "o", *override])
    assert proc.returncode == 2, describe(proc)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "normalize_obs and normalize_reward" in lines[0], lines
    assert not (tmp_path / "o").exists()
