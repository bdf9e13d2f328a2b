"""rl.utils.video: mp4 files decoded back, never overwritten; TensorBoard frames; render checks."""

from __future__ import annotations

import os
import subprocess
import sys

import gymnasium as gym
import imageio.v3 as iio
import numpy as np
import pytest
import tensorflow as tf

from rl.utils import video
from rl.utils.video import VideoRecorder, check_render_possible, play_episode

STEPS = 30


def balance(obs: np.ndarray) -> np.ndarray:
    """Push toward the side the pole leans to: keeps CartPole up well past 30 steps."""
    return (obs[:, 2] + obs[:, 3] > 0).astype(np.int64)


@pytest.fixture(scope="module")
def cartpole_episode() -> video.RenderedEpisode:
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    try:
        return play_episode(env, balance, seed=0, max_steps=STEPS)
    finally:
        env.close()


def decode(path: str) -> np.ndarray:
    return np.stack(list(iio.imiter(path, plugin="FFMPEG")))


def test_cartpole_episode_frames(cartpole_episode):
    assert cartpole_episode.length == STEPS and cartpole_episode.episode_return == STEPS
    assert len(cartpole_episode.frames) == STEPS + 1  # the reset frame + one per step
    assert all(f.shape == (400, 600, 3) and f.dtype == np.uint8 for f in cartpole_episode.frames)


def test_record_decodes_to_the_same_frames(tmp_path, cartpole_episode):
    recorder = VideoRecorder(str(tmp_path / "videos"), fps=50)
    path = recorder.record_episode(cartpole_episode.frames, env_steps=50_000, episode=3, tag="eval")
    assert path == f"{tmp_path}/videos/eval_step000050000_ep03.mp4"
    decoded = decode(path)
    assert decoded.shape == (STEPS + 1, 400, 600, 3)
    # Lossy, but close: mean absolute error of a few grey levels on a 0..255 scale.
    error = np.abs(decoded.astype(int) - np.stack(cartpole_episode.frames).astype(int)).mean()
    assert error < 3, error
    assert iio.immeta(path, plugin="FFMPEG")["fps"] == 50
    assert sorted(os.listdir(tmp_path / "videos")) == ["eval_step000050000_ep03.mp4"]  # no temp


def test_same_name_is_never_overwritten(tmp_path, cartpole_episode):
    recorder = VideoRecorder(str(tmp_path))
    first = recorder.record_episode(cartpole_episode.frames, 7, 0, "test")
    first_bytes = open(first, "rb").read()
    second = recorder.record_episode(cartpole_episode.frames[:5], 7, 0, "test")
    third = recorder.record_episode(cartpole_episode.frames[:3], 7, 0, "test")
    assert [os.path.basename(p) for p in (first, second, third)] == [
        "test_step000000007_ep00.mp4",
        "test_step000000007_ep00_1.mp4",
        "test_step000000007_ep00_2.mp4",
    ]
    assert open(first, "rb").read() == first_bytes
    assert len(decode(second)) == 5 and len(decode(third)) == 3


def test_odd_frame_sizes_are_padded_to_even(tmp_path):
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (17, 31, 3), dtype=np.uint8) for _ in range(4)]
    path = VideoRecorder(str(tmp_path)).record_episode(frames, 1, 1, "odd")
    decoded = decode(path)
    assert decoded.shape == (4, 18, 32, 3)  # one black row and column added, nothing resized


def test_remote_directory_goes_through_gfile(cartpole_episode):
    directory = "ram://video_test/run_0/videos"
    path = VideoRecorder(directory).record_episode(cartpole_episode.frames, 5, 1, "eval")
    assert path == f"{directory}/eval_step000000005_ep01.mp4"
    with tf.io.gfile.GFile(path, "rb") as f:
        data = f.read()
    assert data[4:8] == b"ftyp"  # an mp4 container
    assert tf.io.gfile.listdir(directory) == ["eval_step000000005_ep01.mp4"]


def test_bad_frames_and_names_are_rejected(tmp_path):
    recorder = VideoRecorder(str(tmp_path))
    with pytest.raises(ValueError, match="no frames"):
        recorder.record_episode([], 0, 0, "eval")
    frames = [np.zeros((4, 6, 3), np.uint8), np.zeros((4, 8, 3), np.uint8)]
    with pytest.raises(ValueError, match="frame 1 is 8x4 but frame 0 is 6x4"):
        recorder.record_episode(frames, 0, 0, "eval")
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        recorder.record_episode([np.zeros((4, 6, 3), np.float32)], 0, 0, "eval")
    with pytest.raises(ValueError, match="video tag"):
        recorder.record_episode([np.zeros((4, 6, 3), np.uint8)], 0, 0, "../x")
    assert os.listdir(tmp_path) == []


def _summary_values(logdir) -> dict[str, list]:
    values: dict[str, list] = {}
    for event_file in tf.io.gfile.glob(f"{logdir}/events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(event_file):
            for value in event.summary.value:
                values.setdefault(value.tag, []).append((event.step, value))
    return values


def test_tensorboard_frame_strip(tmp_path, cartpole_episode):
    writer = tf.summary.create_file_writer(str(tmp_path))
    strip = video.write_frame_strip_summary(cartpole_episode.frames, 1000, writer, num_frames=8)
    writer.close()
    # 8 frames of 600 px = 4800 > 2400 px: shrunk by 2 -> 8 * 300 + 7 gaps of 4 px, 200 high.
    assert strip.shape == (200, 8 * 300 + 7 * video.STRIP_GAP, 3)
    np.testing.assert_array_equal(strip[:, 300 : 300 + video.STRIP_GAP], 128)
    np.testing.assert_array_equal(strip[:, :300], cartpole_episode.frames[0][::2, ::2])
    np.testing.assert_array_equal(strip[:, -300:], cartpole_episode.frames[-1][::2, ::2])

    values = _summary_values(tmp_path)
    assert set(values) == {"episode_frames"}
    [(step, value)] = values["episode_frames"]
    assert step == 1000 and value.metadata.plugin_data.plugin_name == "images"
    width, height, png = tf.make_ndarray(value.tensor)
    assert (int(width), int(height)) == (2428, 200)
    np.testing.assert_array_equal(iio.imread(png), strip)


def test_human_render_without_display_says_use_record_video(monkeypatch):
    monkeypatch.setattr(video.sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    message = check_render_possible("human")
    assert message is not None and "\n" not in message and "--record_video" in message
    assert check_render_possible("rgb_array") is None and check_render_possible(None) is None
    monkeypatch.setenv("DISPLAY", ":0")
    assert check_render_possible("human") is None
    monkeypatch.delenv("DISPLAY")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert check_render_possible("human") is None


def test_render_mode_errors_name_the_choices():
    assert "'human', 'rgb_array'" in check_render_possible("rgb")
    message = check_render_possible("rgb_array", supported_modes=["human"])
    assert "supports ['human']" in message


@pytest.mark.e2e  # a process without DISPLAY
def test_rgb_array_renders_headless_in_a_subprocess():
    """No display at all: frames still come out (pygame draws off-screen), and SDL's dummy
    driver keeps it from printing display errors."""
    code = (
        "import gymnasium as gym; from rl.utils.video import use_offscreen_rendering; "
        "assert use_offscreen_rendering(); "
        "e = gym.make('CartPole-v1', render_mode='rgb_array'); e.reset(seed=0); "
        "print(e.render().shape)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("SDL_VIDEODRIVER", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == "(400, 600, 3)", out.stderr
    assert "XDG_RUNTIME_DIR" not in out.stderr, out.stderr


def test_single_env_seed_plus_i_replays_vector_copy_i():
    """What lets --record_video film exactly the episodes evaluate() scored."""
    from rl.envs import make_vector_env

    vec, _ = make_vector_env("CartPole-v1", 3, seed=0, max_episode_steps=60)
    obs, _ = vec.reset(seed=11)
    returns, running = np.zeros(3), np.ones(3, bool)
    while running.any():
        obs, reward, terminated, truncated, _ = vec.step(np.zeros(3, np.int64) + (obs[:, 2] > 0))
        returns += np.where(running, reward, 0.0)
        running &= ~(terminated | truncated)
    vec.close()
    for i in range(3):
        single, _ = make_vector_env(
            "CartPole-v1", 1, 0, env_kwargs={"render_mode": "rgb_array"}, max_episode_steps=60
        )
        rendered = play_episode(single.envs[0], lambda o: (o[:, 2] > 0).astype(int), seed=11 + i)
        single.close()
        assert rendered.episode_return == returns[i] and len(rendered.frames) == returns[i] + 1


def test_play_episode_needs_a_render_mode():
    env = gym.make("CartPole-v1")
    with pytest.raises(ValueError, match="render_mode='rgb_array'"):
        play_episode(env, balance, seed=0)
