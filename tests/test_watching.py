"""--record_video and --render through train.py: real mp4 files, decoded and checked."""

import re

import imageio.v3 as iio
import numpy as np
import pytest

import train


def decode(path) -> np.ndarray:
    return np.stack(list(iio.imiter(path, plugin="FFMPEG")))


ARGS = ["--hparams", "dqn_tiny", "--hparam_override", "eval.video_every=1"]
# The runs here go to the session's trainer process (tests/tiny_trainer.py: real file
# descriptors, as a train.py process has them, without a TensorFlow import per run).
TRAINED_SET = None


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory, trained_run):
    out = tmp_path_factory.mktemp("watch") / "out"
    proc = trained_run.start([*ARGS, "--output_dir", str(out), "--record_video"]).result(300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def test_training_films_every_evaluation(recorded_run):
    videos = sorted(p.name for p in (recorded_run / "run_0" / "videos").iterdir())
    # dqn_tiny evaluates at 300 and 600 steps (eval.every_steps=300, train_steps=600).
    assert videos == ["eval_step000000300_ep00.mp4", "eval_step000000600_ep00.mp4"]
    frames = decode(recorded_run / "run_0" / "videos" / videos[-1])
    assert frames.shape[1:] == (400, 600, 3)  # CartPole renders 600x400 RGB
    assert frames.shape[0] >= 2


def test_a_dict_observation_env_is_filmed_as_the_env_renders_it(tmp_path, trained_run):
    # MiniGrid's observation is a Dict (packed for the agent); the film is the env's own frames.
    pytest.importorskip("minigrid")
    out = tmp_path / "out"
    args = ["--hparams", "ppo_minigrid_tiny", "--output_dir", str(out), "--record_video"]
    proc = trained_run.start(args).result(300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    videos = sorted((out / "run_0" / "videos").iterdir())
    assert [v.name for v in videos][:1] == ["eval_step000000128_ep00.mp4"]
    frames = decode(videos[-1])
    assert frames.ndim == 4 and frames.shape[-1] == 3 and frames.shape[0] >= 2
    assert frames.std() > 0  # a picture, not a blank


def test_a_fetch_task_is_filmed_through_train_py(tmp_path, trained_run):
    # FetchReach draws through MuJoCo in the frames' child process, which registers
    # gymnasium-robotics itself (it imports nothing of rl).
    pytest.importorskip("gymnasium_robotics")
    out = tmp_path / "out"
    # One evaluation (at 200 steps, the end), filmed: one episode drawn frame by frame.
    overrides = "eval.video_every=1,train_steps=200"
    args = ["--hparams", "sac_her_tiny", "--hparam_override", overrides]
    proc = trained_run.start([*args, "--output_dir", str(out), "--record_video"]).result(300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    videos = [v.name for v in (out / "run_0" / "videos").iterdir()]
    assert videos == ["eval_step000000200_ep00.mp4"]
    frames = decode(out / "run_0" / "videos" / videos[0])
    assert frames.shape[1:] == (480, 480, 3)  # gymnasium-robotics' MuJoCo frame size
    assert frames.shape[0] == 51  # the reset frame and one per step of a 50-step episode
    assert frames.std(axis=(1, 2, 3)).min() > 20  # no blank frame


def test_test_mode_films_each_test_episode_and_frames_match_lengths(recorded_run, trained_run):
    proc = trained_run.start(
        [
            *ARGS,
            "--output_dir",
            str(recorded_run),
            "--training",
            "False",
            "--test_episodes",
            "2",
            "--record_video",
        ]
    ).result(300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = re.findall(r"^\s+(\d+)\s+(-?[\d.]+)\s+(\d+)$", proc.stdout, re.M)
    assert len(rows) == 2
    for episode, _, length in rows:
        path = recorded_run / "run_0" / "videos" / f"test_step000000600_ep{int(episode):02d}.mp4"
        frames = decode(path)
        # One frame after reset plus one per step: the film is the episode the table scored.
        assert frames.shape[0] == int(length) + 1


def test_render_without_display_or_while_training_is_a_one_line_error(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    out = tmp_path / "out"
    assert train.main([*ARGS, "--output_dir", str(out), "--render"]) == 2
    assert "needs --training False" in capsys.readouterr().err
    assert train.main([*ARGS, "--output_dir", str(out), "--render", "--training", "False"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs a display" in err[0] and "--record_video" in err[0]
    assert not out.exists()
