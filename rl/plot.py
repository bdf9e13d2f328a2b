"""Learning curves across copies (seeds) of one experiment, with honest uncertainty.

    python -m rl.plot runs/dqn_cartpole        # writes runs/dqn_cartpole/learning_curve.png
    python -m rl.plot runs/x --metric train_return_mean --out curve.png

The mean over copies with a bootstrap 95% band, each copy as a faint line, and the final values'
mean, IQM and CI (Agarwal et al. 2021, https://arxiv.org/abs/2108.13264); the exact definitions
are in docs/watching_agents.md. CSV is read through `tf.io.gfile` (gs:// works); nothing is
unpickled or executed.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from rl.errors import UserError, did_you_mean, user_error_exit
from rl.utils.command_line import UserErrorParser
from rl.utils.files import atomic_write_bytes, join, read_json

DEFAULT_METRIC = "eval_return_mean"
STEP_COLUMN = "env_steps"
PNG_NAME = "learning_curve.png"
FIGSIZE = (8.0, 5.0)  # inches; at DPI 100 the PNG is 800x500
DPI = 100
METRIC_LABELS = {
    "eval_return_mean": "evaluation return (mean over episodes)",
    "eval_return_std": "evaluation return std",
    "eval_length_mean": "evaluation episode length",
    "train_return_mean": "training episode return",
    "wall_seconds": "wall-clock seconds",
}


@dataclass(frozen=True)
class Curve:
    """One copy's `metric` against env steps (rows with an empty value are dropped)."""

    name: str
    steps: np.ndarray
    values: np.ndarray

    def best(self) -> tuple[float, float]:
        """(env step, value) of the first highest value: on eval_return_mean, the evaluation
        whose policy train.py keeps in checkpoints/best/ (ties keep the earlier)."""
        k = int(np.argmax(self.values))
        return float(self.steps[k]), float(self.values[k])


@dataclass(frozen=True)
class Summary:
    """The final value of `metric` across copies."""

    n: int
    mean: float
    iqm: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class PlotResult:
    png_path: str
    curves: list[Curve]
    grid: np.ndarray  # common env steps
    mean: np.ndarray  # mean over copies on the grid
    band_low: np.ndarray  # bootstrap 95% CI of the mean on the grid
    band_high: np.ndarray
    summary: Summary


def interquartile_mean(values: Sequence[float]) -> float:
    """Mean of the middle 50% of the values, with fractional weights at the quartiles."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = len(x)
    if n == 0:
        raise ValueError("interquartile_mean of no values")
    lower = np.arange(n) / n
    upper = (np.arange(n) + 1) / n
    weights = np.clip(np.minimum(upper, 0.75) - np.maximum(lower, 0.25), 0.0, None) / 0.5
    return float(np.dot(weights, x))


def bootstrap_mean_ci(
    samples: np.ndarray, resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap CI (low, high) of the mean over axis 0 (the copies)."""
    samples = np.asarray(samples, dtype=np.float64)
    n = samples.shape[0]
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(resamples, n))
    means = samples[picks].mean(axis=1)  # (resamples, ...)
    alpha = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(means, [alpha, 100.0 - alpha], axis=0)
    return low, high


def summarize(final_values: Sequence[float], resamples: int = 2000, seed: int = 0) -> Summary:
    x = np.asarray(final_values, dtype=np.float64)
    low, high = bootstrap_mean_ci(x, resamples=resamples, seed=seed)
    return Summary(len(x), float(np.mean(x)), interquartile_mean(x), float(low), float(high))


def find_progress_files(output_dir: str) -> list[str]:
    """`run_*/progress.csv` under `output_dir`, in copy order (run_2 before run_10)."""
    paths = tf.io.gfile.glob(join(output_dir, "run_*", "progress.csv"))
    if not paths:
        hint = ""
        if tf.io.gfile.exists(join(output_dir, "progress.csv")):
            parent = output_dir.rstrip("/").rsplit("/", 1)[0] or "."
            hint = f" ({output_dir} is a single copy; pass its parent, {parent})"
        raise UserError(
            f"no run_*/progress.csv under {output_dir!r}{hint}; pass the --output_dir "
            "given to train.py, after at least one evaluation"
        )
    return sorted(paths, key=_copy_sort_key)


def _copy_sort_key(path: str) -> tuple[int, str]:
    run = path.rstrip("/").split("/")[-2]
    index = run.partition("_")[2]
    return (int(index), run) if index.isdigit() else (sys.maxsize, run)


def read_curve(path: str, metric: str) -> Curve:
    """Reads one progress.csv; UserError for an empty file, a missing column, bad numbers."""
    with tf.io.gfile.GFile(path, "r") as f:
        reader = csv.DictReader(f)
        columns, rows = reader.fieldnames or [], list(reader)
    if not columns or not rows:
        raise UserError(f"{path} is empty (no evaluation rows yet); train until the first eval")
    for column in (STEP_COLUMN, metric):
        if column not in columns:
            raise UserError(
                f"{path} has no column {column!r}{did_you_mean(column, columns)}; "
                f"columns: {', '.join(columns)}"
            )
    steps, values = [], []
    for line, row in enumerate(rows, start=2):
        raw = (row.get(metric) or "").strip()
        if not raw:  # e.g. train_return_mean when no training episode ended
            continue
        try:
            steps.append(float(row[STEP_COLUMN]))
            values.append(float(raw))
        except (TypeError, ValueError):
            raise UserError(
                f"{path} line {line}: {STEP_COLUMN}={row.get(STEP_COLUMN)!r}, "
                f"{metric}={raw!r} are not numbers"
            ) from None
    if not steps:
        raise UserError(f"{path}: column {metric!r} has no values")
    order = np.argsort(steps, kind="stable")
    steps_arr, values_arr = np.asarray(steps)[order], np.asarray(values)[order]
    # One value per step (the last written wins), so the curve is a function of env_steps.
    last = np.r_[steps_arr[1:] != steps_arr[:-1], True]
    return Curve(path.rstrip("/").split("/")[-2], steps_arr[last], values_arr[last])


def align(curves: Sequence[Curve]) -> tuple[np.ndarray, np.ndarray]:
    """Puts the copies on one grid (every eval step inside the range all copies cover, each copy
    interpolated there): (grid, values[c, t]). Nothing is extrapolated."""
    start = max(float(c.steps[0]) for c in curves)
    end = min(float(c.steps[-1]) for c in curves)
    if start > end:
        spans = ", ".join(f"{c.name}: {c.steps[0]:.0f}..{c.steps[-1]:.0f}" for c in curves)
        raise UserError(f"the copies share no env_steps range to average over ({spans})")
    grid = np.unique(np.concatenate([c.steps for c in curves]))
    grid = grid[(grid >= start) & (grid <= end)]
    values = np.stack([np.interp(grid, c.steps, c.values) for c in curves])
    return grid, values


def experiment_title(output_dir: str) -> str:
    """The figure's title, '<hparams set> · <env>' from run_0's manifest/hparams JSON, else the
    directory name: public so a notebook that draws its own figure titles it as rl.plot does."""
    name = output_dir.rstrip("/").split("/")[-1] or output_dir
    try:
        runs = sorted(tf.io.gfile.glob(join(output_dir, "run_*", "manifest.json")))
        if not runs:
            return name
        run_dir = runs[0].rsplit("/", 1)[0]
        parts = [str(read_json(runs[0])["hparams_set"])]
        hparams_path = join(run_dir, "hparams.json")
        if tf.io.gfile.exists(hparams_path):
            parts.append(str(read_json(hparams_path)["hparams"]["env"]["value"]))
        return " · ".join(parts)
    except (KeyError, TypeError, ValueError, tf.errors.OpError):
        return name  # the title is cosmetic; a damaged JSON file is not worth failing over


def plot_runs(
    output_dir: str,
    out: str | None = None,
    metric: str = DEFAULT_METRIC,
    resamples: int = 2000,
    seed: int = 0,
) -> PlotResult:
    """Reads the copies, writes the PNG to `out` (default DIR/learning_curve.png)."""
    curves = [read_curve(path, metric) for path in find_progress_files(output_dir)]
    grid, values = align(curves)
    mean = values.mean(axis=0)
    band_low, band_high = bootstrap_mean_ci(values, resamples=resamples, seed=seed)
    summary = summarize([c.values[-1] for c in curves], resamples=resamples, seed=seed)
    png_path = out or join(output_dir, PNG_NAME)
    png = _render_png(
        curves, grid, mean, band_low, band_high, metric, experiment_title(output_dir), summary
    )
    if os.path.dirname(png_path):
        tf.io.gfile.makedirs(os.path.dirname(png_path))
    atomic_write_bytes(png_path, png)
    return PlotResult(png_path, curves, grid, mean, band_low, band_high, summary)


def _render_png(curves, grid, mean, band_low, band_high, metric, title, summary) -> bytes:
    # Figure + Agg canvas, not pyplot: no global backend switch, no display, thread-safe.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import EngFormatter

    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    color = "tab:blue"
    n = len(curves)
    if n == 1:  # one copy: its own curve; a confidence band needs several copies
        (curve,) = curves
        marker = "o" if len(curve.steps) == 1 else None
        label = f"{curve.name} (the only copy)"
        ax.plot(curve.steps, curve.values, color=color, linewidth=2.2, marker=marker, label=label)
    else:
        for i, curve in enumerate(curves):
            label = "each copy (seed)" if i == 0 else None
            ax.plot(curve.steps, curve.values, color="0.55", linewidth=0.9, alpha=0.6, label=label)
        if len(grid) > 1:
            label = "95% CI of the mean (bootstrap)"
            ax.fill_between(
                grid, band_low, band_high, color=color, alpha=0.22, linewidth=0, label=label
            )
            ax.plot(grid, mean, color=color, linewidth=2.2, label=f"mean of {n} copies")
        else:  # a single common step: a point with an error bar
            yerr = [mean - band_low, band_high - mean]
            label = f"mean of {n} copies, 95% CI (bootstrap)"
            ax.errorbar(grid, mean, yerr=yerr, fmt="o", color=color, capsize=4, label=label)
    if metric == DEFAULT_METRIC:  # the evaluations whose policies are kept as the best
        for i, curve in enumerate(curves):
            step, value = curve.best()
            ax.plot(
                [step], [value], linestyle="none", marker="*", markersize=11, color="tab:orange",
                label="best evaluation (checkpoints/best/)" if i == 0 else None,
            )  # fmt: skip
    ax.set_xlabel("env steps")
    ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    fig.suptitle(title, fontsize=13)
    if n == 1:
        subtitle = f"final {metric}: {summary.mean:.1f} (n=1: no CI; train with --copies 3 or more)"
    else:
        subtitle = (
            f"final {metric}: mean {summary.mean:.1f}, IQM {summary.iqm:.1f}, "
            f"95% CI of the mean [{summary.ci_low:.1f}, {summary.ci_high:.1f}] (n={n})"
        )
    ax.set_title(subtitle, fontsize=9, color="0.3")
    ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # 250k, 1.5M
    ax.set_xlim(left=0)
    ax.grid(True, alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    # Mean and band first in the legend, the faint copies last.
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda k: labels[k].startswith("each copy"))
    ax.legend([handles[k] for k in order], [labels[k] for k in order], loc="best", frameon=False)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def format_report(result: PlotResult, metric: str, resamples: int) -> str:
    s = result.summary
    lines = [f"{'copy':<10} {'env_steps':>12} {'final ' + metric:>24}"]
    for curve in result.curves:
        lines.append(f"{curve.name:<10} {curve.steps[-1]:>12,.0f} {curve.values[-1]:>24.2f}")
    lines += ["", f"final {metric} across copies (IQM: arXiv:2108.13264):"]
    lines.append(f"{'n':>4} {'mean':>12} {'IQM':>12}   95% CI of the mean")
    lines.append(
        f"{s.n:>4} {s.mean:>12.2f} {s.iqm:>12.2f}   [{s.ci_low:.2f}, {s.ci_high:.2f}]"
        f" (bootstrap over copies, {resamples} resamples)"
    )
    ends = {float(c.steps[-1]) for c in result.curves}
    if len(ends) > 1:
        lines.append(
            f"note: the copies end at different env steps; the curve's mean stops at "
            f"{result.grid[-1]:,.0f}, where the shortest copy stops"
        )
    lines.append(f"wrote {result.png_path}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = UserErrorParser(
        prog="python -m rl.plot",
        description="Plot a learning curve (mean and bootstrap 95% CI over copies) and "
        "print the final return across copies.",
    )
    p.add_argument("output_dir", help="The --output_dir given to train.py (holds run_<i>/).")
    p.add_argument("--out", help=f"PNG path (default: OUTPUT_DIR/{PNG_NAME}).")
    p.add_argument(
        "--metric",
        default=DEFAULT_METRIC,
        help=f"progress.csv column to plot (default: {DEFAULT_METRIC}).",
    )
    p.add_argument("--resamples", type=int, default=2000, help="Bootstrap resamples.")
    p.add_argument("--seed", type=int, default=0, help="Seed of the bootstrap resampling.")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.resamples < 1:
            raise UserError(f"--resamples must be >= 1, got {args.resamples}")
        result = plot_runs(args.output_dir, args.out, args.metric, args.resamples, args.seed)
    except UserError as error:
        return user_error_exit("rl.plot", error)
    print(format_report(result, args.metric, args.resamples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
