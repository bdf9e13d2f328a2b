"""Watching agents: mp4 videos of episodes, frame summaries for TensorBoard, render checks.

Everything works headless: frames come from `render_mode="rgb_array"`, videos are encoded by
the ffmpeg inside the `imageio-ffmpeg` wheel (libx264, yuv420p: what every player decodes).
Video files are never overwritten, written atomically, and copied through `tf.io.gfile` for
gs:// run dirs, since ffmpeg writes only local files.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

RENDER_MODES = (None, "human", "rgb_array")
_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
STRIP_GAP = 4


# ------------------------------------------------------------------------------ render checks
def check_render_possible(
    render_mode: str | None, supported_modes: Sequence[str] | None = None
) -> str | None:
    """None if `render_mode` can work here, else a one-line reason (for a `UserError`)."""
    if render_mode not in RENDER_MODES:
        return f"unknown render mode {render_mode!r}; choose one of " + ", ".join(
            repr(m) for m in RENDER_MODES
        )
    if render_mode is None:
        return None
    if supported_modes is not None and render_mode not in supported_modes:
        return (
            f"this env cannot render with render_mode={render_mode!r} "
            f"(it supports {list(supported_modes)})"
        )
    if render_mode == "human" and not display_available():
        return (
            "--render needs a display, and there is none (DISPLAY and WAYLAND_DISPLAY are "
            "unset); use --record_video True to write mp4 files to run_<i>/videos/ instead"
        )
    return None


def display_available() -> bool:
    """Whether a window can be opened: always on macOS/Windows, on Linux only with X or Wayland."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def use_offscreen_rendering() -> bool:
    """Without a display (and no user SDL_VIDEODRIVER), points SDL at its "dummy" video driver, else
    it probes X11/Wayland and prints errors ("XDG_RUNTIME_DIR is invalid"); returns whether it
    did."""
    if display_available() or "SDL_VIDEODRIVER" in os.environ:
        return False
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    return True


# ------------------------------------------------------------------------------ playing
@dataclass(frozen=True)
class RenderedEpisode:
    frames: list[np.ndarray]
    episode_return: float
    length: int


def play_episode(
    env,
    policy: Callable[[np.ndarray], np.ndarray],
    seed: int,
    max_steps: int | None = None,
    full_game: bool = False,
) -> RenderedEpisode:
    """Plays one episode of a single env (a vector env's last frame would show the next episode;
    `seed=s + i` replays its copy i). `frames`: the reset frame and one per step (rgb_array only).
    `full_game` (Atari): a lost life is followed by a seedless reset that continues the game, so
    the video shows the whole game the evaluation scores."""
    mode = getattr(env, "render_mode", None)
    if mode not in ("rgb_array", "human"):
        raise ValueError(
            f"play_episode needs an env built with render_mode='rgb_array' or 'human', "
            f"got render_mode={mode!r}"
        )
    collect = mode == "rgb_array"
    if collect:
        use_offscreen_rendering()
    obs, _ = env.reset(seed=seed)
    frames = [_check_frame(env.render())] if collect else []
    episode_return, length = 0.0, 0
    while max_steps is None or length < max_steps:
        action = np.asarray(policy(np.asarray(obs)[None]))[0]
        obs, reward, terminated, truncated, info = env.step(action)
        episode_return += float(reward)
        length += 1
        if collect:
            frames.append(_check_frame(env.render()))
        if terminated or truncated:
            if not full_game or "game_score" in info:
                break
            obs, _ = env.reset()
            if collect:
                frames.append(_check_frame(env.render()))
    return RenderedEpisode(frames=frames, episode_return=episode_return, length=length)


# ------------------------------------------------------------------------------ mp4 files
class VideoRecorder:
    """Writes episodes as mp4 files into `directory` (local or any tf.io.gfile filesystem)."""

    def __init__(self, directory: str, fps: int = 30, quality: int = 7) -> None:
        if fps < 1:
            raise ValueError(f"fps must be >= 1, got {fps}")
        self.directory = directory.rstrip("/")
        self.fps = fps
        self.quality = quality  # imageio-ffmpeg's 1..10; libx264 crf = 51 * (1 - q/10): 7 -> 15

    def filename(self, env_steps: int, episode: int, tag: str) -> str:
        """`<tag>_step<env steps, 9 digits>_ep<episode, 2 digits>.mp4`; sorts by step."""
        if not _TAG.match(tag):
            raise ValueError(f"video tag must match {_TAG.pattern}, got {tag!r}")
        if env_steps < 0 or episode < 0:
            raise ValueError(f"env_steps and episode must be >= 0, got {env_steps}, {episode}")
        return f"{tag}_step{env_steps:09d}_ep{episode:02d}.mp4"

    def record_episode(
        self, frames: Sequence[np.ndarray], env_steps: int, episode: int, tag: str = "eval"
    ) -> str:
        """Encodes `frames` (HxWx3 uint8) into a new file (`_1`, `_2`, ... if taken): its path."""
        name = self.filename(env_steps, episode, tag)
        video = _stack_frames(frames)
        tf.io.gfile.makedirs(self.directory)
        # ffmpeg writes only local files and picks the container from the extension: it encodes
        # into a local temporary .mp4, copied next to its final name (gs:// too), then renamed.
        tmp_name = f".tmp-{uuid.uuid4().hex}.mp4"
        tmp = f"{self.directory}/{tmp_name}"
        with tempfile.TemporaryDirectory(prefix="rl_video_") as local_dir:
            local_tmp = os.path.join(local_dir, tmp_name)
            _encode_mp4(local_tmp, video, self.fps, self.quality)
            try:
                tf.io.gfile.copy(local_tmp, tmp, overwrite=True)
                return self._publish(tmp, name)
            finally:
                if tf.io.gfile.exists(tmp):
                    tf.io.gfile.remove(tmp)

    def _publish(self, tmp: str, name: str) -> str:
        """Renames `tmp` to the first free name among name, name_1, name_2, ..."""
        stem = name[: -len(".mp4")]
        for suffix in range(10_000):
            candidate = name if suffix == 0 else f"{stem}_{suffix}.mp4"
            path = f"{self.directory}/{candidate}"
            if tf.io.gfile.exists(path):
                continue
            try:  # overwrite=False: a writer racing us for this name makes us move on
                tf.io.gfile.rename(tmp, path, overwrite=False)
            except tf.errors.AlreadyExistsError:
                continue
            return path
        raise FileExistsError(f"no free video name for {name!r} in {self.directory}")


def _encode_mp4(path: str, video: np.ndarray, fps: int, quality: int) -> None:
    import imageio_ffmpeg

    video = pad_to_even(video)
    height, width = video.shape[1:3]
    writer = imageio_ffmpeg.write_frames(
        path,
        (width, height),
        pix_fmt_in="rgb24",
        pix_fmt_out="yuv420p",
        fps=fps,
        quality=quality,
        codec="libx264",
        # 1 = never resize: imageio would scale to multiples of 16, changing the frame size.
        # yuv420p only needs even sizes, which pad_to_even guarantees.
        macro_block_size=1,
        ffmpeg_log_level="error",
        # Lets browsers start playing before the whole file has arrived.
        output_params=["-movflags", "+faststart"],
    )
    writer.send(None)  # start the generator (and the ffmpeg process)
    try:
        for frame in video:
            writer.send(np.ascontiguousarray(frame))
    finally:
        writer.close()


def pad_to_even(video: np.ndarray) -> np.ndarray:
    """Pads (T, H, W, 3) frames with one black row/column where H or W is odd (yuv420p's
    chroma is subsampled 2x2, so libx264 refuses odd sizes). Even sizes pass unchanged."""
    pad_h, pad_w = video.shape[1] % 2, video.shape[2] % 2
    if not (pad_h or pad_w):
        return video
    return np.pad(video, ((0, 0), (0, pad_h), (0, pad_w), (0, 0)))


def _check_frame(frame) -> np.ndarray:
    if frame is None:
        raise ValueError(
            "env.render() returned None; build the env with render_mode='rgb_array' to get frames"
        )
    return np.asarray(frame)


def _stack_frames(frames: Sequence[np.ndarray]) -> np.ndarray:
    """(T, H, W, 3) uint8 from a list of frames; RGBA drops its alpha. Errors name the frame."""
    if len(frames) == 0:
        raise ValueError("cannot record a video with no frames")
    first = np.asarray(frames[0])
    out = []
    for i, frame in enumerate(frames):
        frame = np.asarray(frame)
        if frame.ndim != 3 or frame.shape[2] not in (3, 4) or frame.dtype != np.uint8:
            raise ValueError(
                f"frame {i} has shape {frame.shape} and dtype {frame.dtype}; "
                "expected HxWx3 uint8 (render_mode='rgb_array')"
            )
        if frame.shape[:2] != first.shape[:2]:
            raise ValueError(
                f"frame {i} is {frame.shape[1]}x{frame.shape[0]} but frame 0 is "
                f"{first.shape[1]}x{first.shape[0]}; all frames of a video need one size"
            )
        out.append(frame[..., :3])
    return np.stack(out)


# ------------------------------------------------------------------------------ TensorBoard
def frame_strip(
    frames: Sequence[np.ndarray], num_frames: int = 8, max_width: int = 2400
) -> np.ndarray:
    """`num_frames` evenly spaced frames side by side, with a grey gap, as one HxWx3 uint8 image at
    most `max_width` wide (frames shrunk by an integer factor)."""
    video = _stack_frames(frames)
    count = min(num_frames, len(video))
    picks = np.unique(np.linspace(0, len(video) - 1, count).round().astype(int))
    step = max(1, -(-video.shape[2] * len(picks) // max_width))  # ceil division
    tiles = [video[i, ::step, ::step] for i in picks]
    gap = np.full((tiles[0].shape[0], STRIP_GAP, 3), 128, np.uint8)  # grey: frames stay apart
    return np.concatenate([part for tile in tiles for part in (gap, tile)][1:], axis=1)


def write_frame_strip_summary(
    frames: Sequence[np.ndarray],
    step: int,
    writer: tf.summary.SummaryWriter,
    name: str = "episode_frames",
    num_frames: int = 8,
) -> np.ndarray:
    """Writes `frame_strip(frames)` as a `tf.summary.image` at `step`; returns the strip. Why
    stills: every TensorBoard shows them with a step slider; it has no video dashboard."""
    strip = frame_strip(frames, num_frames)
    with writer.as_default(step=step):
        tf.summary.image(name, strip[None], max_outputs=1)
    writer.flush()
    return strip
