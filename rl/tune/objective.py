"""One trial: sample the space, build the hparams through the override path, train each tuning
seed through `rl.training.train`, and score it.

A run's score is the mean of its last `last_k` evaluation returns (a solved run's remaining
evaluations count at its last return, so an early solve is not scored on those before it).
Evaluations reach the pruner at step `seed_index * train_steps + env_steps`, so trials are
compared seed by seed at the same point of their budget.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rl import loop
from rl.errors import Diverged, UserError
from rl.hparams import HParams
from rl.hparams.override_parser import override_text
from rl.tune.search_space import Param, SearchSpace
from rl.utils.files import join

TRIALS_DIR = "trials"


class InvalidTrial(Exception):
    """The sampled values together break a rule of the set (e.g. a batch above the rollout)."""


@dataclass(frozen=True)
class TrialConfig:
    """What every trial of a study shares."""

    hparams_set: str
    base_override: str  # --hparam_override, applied before the trial's values
    train_steps: int | None
    seeds: tuple[int, ...]
    last_k: int
    output_dir: str


def suggest(trial: Any, param: Param) -> Any:
    """The trial's value for `param` (Optuna's suggest API)."""
    if param.kind == "categorical":
        return trial.suggest_categorical(param.key, list(param.choices))
    if param.kind == "int":
        return trial.suggest_int(param.key, int(param.low), int(param.high), log=param.log)
    return trial.suggest_float(param.key, param.low, param.high, log=param.log)


def distributions(space: SearchSpace) -> dict[str, Any]:
    """The Optuna distributions of `space` (for trials added by hand, e.g. in tests)."""
    import optuna.distributions as d

    out: dict[str, Any] = {}
    for param in space.params:
        if param.kind == "categorical":
            out[param.key] = d.CategoricalDistribution(list(param.choices))
        elif param.kind == "int":
            out[param.key] = d.IntDistribution(int(param.low), int(param.high), log=param.log)
        else:
            out[param.key] = d.FloatDistribution(param.low, param.high, log=param.log)
    return out


def trial_hparams(config: TrialConfig, values: dict[str, Any]) -> HParams:
    """The set, `--hparam_override`, the trial's values and `--train_steps`, through
    `rl.cli.hparams_from_args` (train.py's path: typed parsing, value checks, names looked up)."""
    from rl.cli import check_values, hparams_from_args

    overrides = ",".join(filter(None, [config.base_override, override_text(values)]))
    args = argparse.Namespace(
        hparams=config.hparams_set, hparam_override=overrides, train_steps=config.train_steps
    )
    args.winner = args.env = args.eval_episodes = None  # train.py flags a trial leaves unset
    return hparams_from_args(args, check_values)


def run_dir(output_dir: str, trial_number: int, seed: int, phase: str = TRIALS_DIR) -> str:
    """`<output_dir>/trials/trial_0007_seed_1`: a normal run dir whose name is unique in the
    study, so TensorBoard's HParams tab shows every trial and seed as its own session."""
    return join(output_dir, phase, f"trial_{trial_number:04d}_seed_{seed}")


def run_score(returns: Sequence[float], evaluations_due: int, last_k: int) -> float:
    """Mean of the last `last_k` of `evaluations_due` returns, an early stop's last one repeated."""
    if not returns:
        raise Diverged("the run made no evaluation")
    padded = list(returns) + [returns[-1]] * max(0, evaluations_due - len(returns))
    tail = padded[-last_k:]
    return sum(tail) / len(tail)


def evaluations_due(hparams: HParams) -> int:
    """How many evaluations a run of the full budget makes (the last one at the budget)."""
    return -(-hparams.train_steps // hparams.eval.every_steps)


class TrialReporter:
    """The loop callback of one run of a trial: records its evaluation returns, reports each to
    the pruner, and stops the run (`loop.STOP`) once the pruner says so."""

    __name__ = "pruner"

    def __init__(self, trial: Any, seed_index: int, train_steps: int) -> None:
        self.trial = trial
        self.offset = seed_index * train_steps
        self.returns: list[float] = []
        self.pruned_at: int | None = None

    def __call__(self, run: loop.Run, step: int, metrics: dict[str, float]) -> str:
        value = metrics["eval/return_mean"]
        if not math.isfinite(value):
            raise Diverged(f"evaluation at {step:,} env steps returned {value}")
        self.returns.append(value)
        self.trial.report(value, self.offset + step)
        if self.trial.should_prune():
            self.pruned_at = step
            return loop.STOP
        return loop.CONTINUE


def objective(trial: Any, space: SearchSpace, config: TrialConfig) -> float:
    """The trial's value: the mean run score over the tuning seeds, trained one after another
    through `rl.training.train`. Raises optuna.TrialPruned when the pruner stopped it,
    `InvalidTrial` / `Diverged` for a failed trial."""
    import optuna
    import tensorflow as tf

    from rl import training

    values = {param.key: suggest(trial, param) for param in space.params}
    try:
        hparams = trial_hparams(config, values)
    except UserError as error:
        raise InvalidTrial(str(error)) from None
    scores = []
    for index, seed in enumerate(config.seeds):
        reporter = TrialReporter(trial, index, hparams.train_steps)
        directory = run_dir(config.output_dir, trial.number, seed)
        try:
            # A non-finite loss or parameter raises the loop's own Diverged (halt_on_nonfinite).
            training.train(hparams, [directory], [seed], config.hparams_set, callbacks=[reporter])
        except (FloatingPointError, tf.errors.InvalidArgumentError) as error:
            raise Diverged(str(error).splitlines()[0]) from None
        if reporter.pruned_at is not None:
            raise optuna.TrialPruned(f"pruned at {reporter.pruned_at:,} env steps")
        scores.append(run_score(reporter.returns, evaluations_due(hparams), config.last_k))
    return sum(scores) / len(scores)
