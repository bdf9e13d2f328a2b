"""One logger, many sinks (Stable-Baselines3's design): code records keys, sinks write them.

Keys are "section/name" ("train/loss", "eval/return_mean"). The TensorBoard sink writes each
section to its own event directory (`train/`, `eval/`, `test/`); the CSV sink appends evaluation
rows to `progress.csv`; the console sink prints a live progress line.
"""

from __future__ import annotations

import csv
import io
import logging
import sys
import time
from collections.abc import Mapping

import tensorflow as tf

from rl.utils.files import atomic_write_bytes, join


class _CurrentStderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record arrives (tests swap it)."""

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def configure_logging(level: str) -> None:
    """Python logging of the `rl` package at `level`, to stderr; DEBUG turns on the agents' update
    diagnostics, WARNING silences the console progress line."""
    logger = logging.getLogger("rl")
    logger.setLevel(level)
    logger.propagate = False
    if not any(isinstance(h, _CurrentStderrHandler) for h in logger.handlers):
        handler = _CurrentStderrHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)


class Sink:
    def write(self, values: Mapping[str, float], step: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class TensorBoardSink(Sink):
    """tf.summary scalars, one event directory per section."""

    SECTIONS = ("train", "eval", "test")

    def __init__(self, run_dir: str) -> None:
        self.run_dir = run_dir
        self._writers: dict[str, tf.summary.SummaryWriter] = {}

    def writer(self, section: str) -> tf.summary.SummaryWriter:
        if section not in self._writers:
            self._writers[section] = tf.summary.create_file_writer(join(self.run_dir, section))
        return self._writers[section]

    def write(self, values: Mapping[str, float], step: int) -> None:
        by_section: dict[str, dict[str, float]] = {}
        for key, value in values.items():
            section, _, name = key.partition("/")
            if section not in self.SECTIONS:  # e.g. "time/steps_per_second" -> train/
                section, name = "train", key
            by_section.setdefault(section, {})[name] = value
        for section, scalars in by_section.items():
            with self.writer(section).as_default(step=step):
                for name, value in scalars.items():
                    tf.summary.scalar(name, value)

    def write_hparams(self, flat_hparams: Mapping[str, object], trial_id: str) -> None:
        """Shows the run's hparams in TensorBoard's HParams tab."""
        from tensorboard.plugins.hparams import api as hparams_api

        with self.writer("train").as_default(step=0):
            hparams_api.hparams(dict(flat_hparams), trial_id=trial_id)

    def close(self) -> None:
        for writer in self._writers.values():
            writer.flush()
            writer.close()


class CSVSink(Sink):
    """Appends one row per evaluation to progress.csv (rewritten atomically each time)."""

    COLUMNS = (
        "env_steps",
        "wall_seconds",
        "eval_return_mean",
        "eval_return_std",
        "eval_length_mean",
        "eval_episodes",
        "train_return_mean",
        # Atari (empty elsewhere): raw full-game score and clipped per-life return.
        "eval_raw_score_mean",
        "eval_clipped_return_mean",
        "train_raw_score_mean",
        # The best eval_return_mean so far (the policy kept in checkpoints/best/).
        "best_eval_return_mean",
        # Goal-conditioned envs (empty elsewhere): episodes ending with info["is_success"].
        "eval_success_rate",
    )

    def __init__(self, path: str, resume_at_step: int | None = None) -> None:
        self.path = path
        self.rows: list[dict[str, str]] = []
        if tf.io.gfile.exists(path):
            with tf.io.gfile.GFile(path, "r") as f:
                self.rows = list(csv.DictReader(f))
            if resume_at_step is not None:
                # Rows written after the checkpoint we resume from belong to a killed future.
                self.rows = [r for r in self.rows if int(r["env_steps"]) <= resume_at_step]

    def write(self, values: Mapping[str, float], step: int) -> None:
        if "eval/return_mean" not in values:
            return
        self.rows.append(self.row(values, step))
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=self.COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.rows)
        atomic_write_bytes(self.path, buffer.getvalue().encode())

    def row(self, values: Mapping[str, float], step: int) -> dict[str, str]:
        """The row of an evaluation (subclasses add columns: one write, whole rows only)."""
        return {
            "env_steps": str(step),
            "wall_seconds": f"{values.get('time/wall_seconds', 0.0):.2f}",
            "eval_return_mean": f"{values['eval/return_mean']:.4f}",
            "eval_return_std": f"{values.get('eval/return_std', 0.0):.4f}",
            "eval_length_mean": f"{values.get('eval/length_mean', 0.0):.2f}",
            "eval_episodes": str(int(values.get("eval/episodes", 0))),
            "train_return_mean": _fmt(values.get("train/episode_return")),
            "eval_raw_score_mean": _fmt(values.get("eval/raw_score_mean")),
            "eval_clipped_return_mean": _fmt(values.get("eval/clipped_return_mean")),
            "train_raw_score_mean": _fmt(values.get("train/raw_score_mean")),
            "best_eval_return_mean": _fmt(values.get("eval/best_return_mean")),
            "eval_success_rate": _fmt(values.get("eval/success_rate")),
        }


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


class ConsoleSink(Sink):
    """A live progress line: steps, steps/s, last eval return, ETA."""

    def __init__(self, total_steps: int, label: str, stream=None, every_seconds: float = 2.0):
        self.total_steps = total_steps
        self.label = label
        self.stream = stream or sys.stdout
        self.every_seconds = every_seconds
        self._last_print = 0.0
        self._last_eval: float | None = None
        self._tty = self.stream.isatty()
        # The progress line is INFO: --log_level WARNING hides it (an unconfigured "rl"
        # logger, level NOTSET, keeps it).
        self._quiet = logging.getLogger("rl").level > logging.INFO

    def write(self, values: Mapping[str, float], step: int) -> None:
        if "eval/return_mean" in values:
            self._last_eval = values["eval/return_mean"]
        if self._quiet:
            return
        now = time.monotonic()
        final = step >= self.total_steps or "eval/return_mean" in values
        if not final and now - self._last_print < self.every_seconds:
            return
        self._last_print = now
        sps = values.get("time/steps_per_second")
        eta = ""
        if sps:
            remaining = max(0, self.total_steps - step) / sps
            eta = f" | ETA {int(remaining // 60)}:{int(remaining % 60):02d}"
        evaluation = "-" if self._last_eval is None else f"{self._last_eval:.1f}"
        rate = "-" if not sps else f"{sps:,.0f}"
        line = (
            f"[{self.label}] step {step:,}/{self.total_steps:,} "
            f"({100.0 * step / max(1, self.total_steps):.1f}%) | {rate} steps/s "
            f"| eval {evaluation}{eta}"
        )
        if self._tty:
            self.stream.write("\r" + line.ljust(100))
            if step >= self.total_steps:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


class Logger:
    """Collects key/value records and hands them to every sink on `dump`."""

    def __init__(self, sinks: list[Sink]) -> None:
        self.sinks = sinks
        self._values: dict[str, float] = {}

    def record(self, key: str, value: float) -> None:
        self._values[key] = float(value)

    def record_many(self, values: Mapping[str, float]) -> None:
        self._values.update({key: float(value) for key, value in values.items()})

    def dump(self, step: int) -> None:
        for sink in self.sinks:
            sink.write(self._values, step)
        self._values = {}

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()
