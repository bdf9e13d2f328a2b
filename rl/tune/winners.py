"""The end of a study: re-run the best trials on fresh seeds, pick the winner on those, and write
winner.json, trials.csv and two plots into the study's directory (`--publish` also writes a
named hparams set into the package). A trial's tuning value is the best of many noisy draws, so
it is biased upward (the winner's curse): the fresh-seed score is the number to believe.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import os
import statistics
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rl.hparams.override_parser import override_text
from rl.tune.objective import TrialConfig, evaluations_due, run_dir, run_score, trial_hparams
from rl.tune.storage import without_password
from rl.utils.files import atomic_write_bytes, atomic_write_json, join

FRESH_DIR = "fresh"
# Judging seeds start here; tuning seeds must stay below (checked by the command line).
FRESH_SEED_BASE = 10_000
TUNED_DIR = Path(__file__).resolve().parents[1] / "hparams" / "tuned"


@dataclass(frozen=True)
class FreshScore:
    trial_number: int
    tuning_value: float
    params: dict[str, Any]
    scores: tuple[float, ...]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.scores)

    @property
    def std(self) -> float:
        return statistics.pstdev(self.scores)


def progress_returns(directory: str) -> list[float]:
    """The evaluation returns of a run dir, in order (its progress.csv)."""
    import tensorflow as tf

    with tf.io.gfile.GFile(join(directory, "progress.csv"), "r") as f:
        return [float(row["eval_return_mean"]) for row in csv.DictReader(f)]


def fresh_seeds(count: int) -> list[int]:
    return [FRESH_SEED_BASE + i for i in range(count)]


def rerun_on_fresh_seeds(
    trial: Any, config: TrialConfig, seeds: Sequence[int]
) -> tuple[float, ...]:
    """Trains the trial's values on `seeds` (`<output_dir>/fresh/trial_N_seed_S`, resumable
    like any run) and returns each run's score (the objective's, read from progress.csv)."""
    from rl import training
    from rl.utils.run_dir_lock import locked_run_dirs

    hparams = trial_hparams(config, trial.params)
    directories = [run_dir(config.output_dir, trial.number, seed, FRESH_DIR) for seed in seeds]
    with locked_run_dirs(directories):  # a second selecting tuner exits 2 instead of racing
        training.train(hparams, directories, list(seeds), config.hparams_set)
    due = evaluations_due(hparams)
    return tuple(run_score(progress_returns(d), due, config.last_k) for d in directories)


def select_winner(study: Any, config: TrialConfig, top_k: int, seeds: Sequence[int]) -> FreshScore:
    """Re-runs the `top_k` best complete trials on `seeds`; the best fresh-seed mean wins."""
    from optuna.trial import TrialState

    complete = study.get_trials(states=(TrialState.COMPLETE,))
    best = sorted(complete, key=lambda t: t.value, reverse=True)[:top_k]
    results = []
    for trial in best:
        print(f"[tune] re-running trial {trial.number} on fresh seeds {list(seeds)}")
        scores = rerun_on_fresh_seeds(trial, config, seeds)
        results.append(FreshScore(trial.number, trial.value, dict(trial.params), scores))
        print(
            f"[tune] trial {trial.number}: tuning value {trial.value:.2f}, fresh-seed score "
            f"{results[-1].mean:.2f} ± {results[-1].std:.2f}"
        )
    return max(results, key=lambda r: r.mean)


def write_trials_csv(study: Any, path: str) -> None:
    """One row per trial: number, state, value, duration, every param, failure, worker."""
    trials = study.get_trials(deepcopy=False)
    keys = sorted({key for trial in trials for key in trial.params})
    f = io.StringIO()
    writer = csv.writer(f)
    writer.writerow(["number", "state", "value", "seconds", *keys, "failure", "surplus"])
    for t in trials:
        seconds = "" if t.duration is None else f"{t.duration.total_seconds():.1f}"
        writer.writerow(
            [t.number, t.state.name, "" if t.value is None else t.value, seconds]
            + [t.params.get(key, "") for key in keys]
            + [t.user_attrs.get("failure", ""), t.user_attrs.get("surplus", "")]
        )
    atomic_write_bytes(path, f.getvalue().encode())


def write_plots(study: Any, output_dir: str) -> None:
    """optimization_history.png and param_importances.png (the latter needs two complete
    trials; PED-ANOVA importance, which needs no scikit-learn)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import optuna.visualization.matplotlib as vis
    from optuna.importance import PedAnovaImportanceEvaluator
    from optuna.trial import TrialState

    def save(axes: Any, name: str) -> None:
        image = io.BytesIO()
        axes.figure.savefig(image, format="png", dpi=100, bbox_inches="tight")
        plt.close(axes.figure)
        atomic_write_bytes(join(output_dir, name), image.getvalue())

    save(vis.plot_optimization_history(study), "optimization_history.png")
    if len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))) >= 2:
        evaluator = PedAnovaImportanceEvaluator()
        save(vis.plot_param_importances(study, evaluator=evaluator), "param_importances.png")


def tuned_set_name(hparams_set: str) -> str:
    return f"{hparams_set}_tuned"


def write_tuned_module(
    winner: FreshScore,
    config: TrialConfig,
    study_name: str,
    storage_url: str,
    seeds: Sequence[int],
    train_steps: int,
    tuned_dir: Path = TUNED_DIR,
) -> Path:
    """`--publish`: `<tuned_dir>/<set>_tuned.py` registering `<set>_tuned` (the parent set plus the
    winner's values; the study's own overrides are its protocol, named but not applied), and an
    `__init__.py` importing every generated module by name."""
    name = tuned_set_name(config.hparams_set)
    # The tuned keys only (the protocol stays out), as typed literals one per line.
    items = winner.params.items()
    tuned = "".join(f"    {json.dumps(key)}: {_python_literal(value)},\n" for key, value in items)
    # A server URL without its password; an SQLite path would name the tuning machine's disk.
    where = without_password(storage_url)
    if storage_url.startswith("sqlite:"):
        where = "SQLite study.db in the tuner's --output_dir"
    described = _study_description(winner, config, f"{study_name!r} ({where})", seeds, train_steps)
    docstring = "\n".join(textwrap.wrap(described, 96))
    summary = (
        f"`{config.hparams_set}` with {', '.join(winner.params)} from Optuna study "
        f"{study_name!r} (fresh-seed score {winner.mean:.2f} ± {winner.std:.2f}; the module "
        "docstring has the objective)."
    )
    function_doc = "\n    ".join(textwrap.wrap(summary, 92))
    text = f'''"""`{name}`: `{config.hparams_set}` with the winner of an Optuna study (generated).

{docstring}
"""

from __future__ import annotations

from rl.hparams.hparams import HParams
from rl.hparams.override_parser import override_text
from rl.registry import get_hparams, register_hparams

PARENT = {json.dumps(config.hparams_set)}
# The winner's values; strings are override text (schedules, lists), as the space offered them.
TUNED = {{
{tuned}}}


@register_hparams({json.dumps(name)})
def {name}() -> HParams:
    """{function_doc}"""
    hp = get_hparams(PARENT)()
    hp.override(override_text(TUNED))  # the typed path of --hparam_override
    return hp
'''
    tuned_dir.mkdir(parents=True, exist_ok=True)
    path = tuned_dir / f"{name}.py"
    atomic_write_bytes(os.fspath(path), text.encode())  # a torn module would break `import rl`
    _write_tuned_init(tuned_dir)
    return path


def _study_description(
    winner: FreshScore, config: TrialConfig, study: str, seeds: Sequence[int], train_steps: int
) -> str:
    """The study (`study`: its name and where it lives), its objective, and the winner's tuning
    and fresh-seed scores."""
    protocol = f" under --hparam_override {config.base_override!r}" if config.base_override else ""
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    scores = ", ".join(f"{s:.1f}" for s in winner.scores)
    return (
        f"Study {study}, {today}. Objective: mean over "
        f"tuning seeds {list(config.seeds)} of the mean of the last {config.last_k} evaluation "
        f"returns, train_steps={train_steps}{protocol}. Trial {winner.trial_number}: tuning value "
        f"{winner.tuning_value:.2f}; fresh-seed score {winner.mean:.2f} ± {winner.std:.2f} over "
        f"seeds {list(seeds)} ({scores}). Generated by `python -m rl.tune`; tune again to change."
    )


def _write_tuned_init(tuned_dir: Path) -> None:
    modules = sorted(p.stem for p in tuned_dir.glob("*.py") if p.stem != "__init__")
    imports = "".join(f"    {module},\n" for module in modules)
    body = f"from rl.hparams.tuned import (  # noqa: F401\n{imports})\n" if modules else ""
    doc = '"""Sets published by `python -m rl.tune --publish` (generated: one import per set)."""'
    atomic_write_bytes(os.fspath(tuned_dir / "__init__.py"), f"{doc}\n\n{body}".encode())


def _python_literal(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def write_winner_json(
    winner: FreshScore,
    path: str,
    hparams_set: str,
    seeds: Sequence[int],
    published_module: Path | None,
) -> None:
    """The winner as `train.py --winner` reads it: the tuned set, the winner's values as
    `--hparam_override` text (not the study's own protocol overrides) and its scores."""
    atomic_write_json(
        path,
        {
            "hparams_set": hparams_set,
            "hparam_override": override_text(winner.params),
            "trial": winner.trial_number,
            "tuning_value": winner.tuning_value,
            "params": winner.params,
            "fresh_seeds": list(seeds),
            "fresh_scores": list(winner.scores),
            "fresh_mean": winner.mean,
            "fresh_std": winner.std,
            "published_module": None if published_module is None else os.fspath(published_module),
        },
    )
