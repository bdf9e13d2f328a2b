"""`--population N`: N trials at a time trained as ONE compiled program, through Optuna's
ask/tell interface instead of `study.optimize`.

Why: on a TF-ops env a trial costs mostly its trace and compilation, and trials that differ
only in numbers (`rl.compiled.population.POPULATION_KEYS`) need the same program. The study is
the sequential one's (records, objective, failure rules, resume); a pruned trial's members stop
recording while the lockstep program still steps them.
"""

from __future__ import annotations

import math
import os
import socket
from typing import TYPE_CHECKING, Any

from rl import loop
from rl.errors import Diverged, UserError
from rl.tune.objective import (
    TrialConfig,
    TrialReporter,
    evaluations_due,
    run_dir,
    run_score,
    suggest,
    trial_hparams,
)
from rl.tune.search_space import SearchSpace
from rl.tune.study import run_batches

if TYPE_CHECKING:
    from rl.engines.compiled import ProgramCache


def check_population_space(space: SearchSpace, population: int) -> None:
    """UserError (one line) when `--population N > 1` meets a key a population cannot vary."""
    from rl.compiled.population import POPULATION_KEYS

    if population <= 1:
        return
    shaped = [key for key in space.keys() if key not in POPULATION_KEYS]
    if shaped:
        numeric = [key for key in space.keys() if key in POPULATION_KEYS]
        raise UserError(
            f"--population {population} trains trials as one program, so they may differ only "
            f"in {', '.join(POPULATION_KEYS)}; space {space.name!r} also tunes "
            f"{', '.join(shaped)}: add --keys {','.join(numeric)} or use --population 1"
        )


class PopulationReporter:
    """The loop callback of the whole population: hands each run's evaluation to its trial's
    `TrialReporter`; a trial pruned or diverged on one seed stops its other seeds too."""

    __name__ = "pruner"

    def __init__(self, members: dict[str, TrialReporter]) -> None:
        self.members = members  # run dir -> its trial's reporter for that seed
        self.stopped: dict[int, str] = {}  # trial number -> "pruned" or the divergence

    def __call__(self, run: loop.Run, step: int, metrics: dict[str, float]) -> str:
        member = self.members[run.run_dir]
        number = member.trial.number
        if number in self.stopped:
            return loop.STOP
        try:
            decision = member(run, step, metrics)
        except Diverged as error:
            self.stopped[number] = str(error)
            return loop.STOP
        if decision == loop.STOP:
            self.stopped[number] = "pruned"
        return decision


def run_population_worker(
    study: Any,
    space: SearchSpace,
    config: TrialConfig,
    n_trials: int,
    population: int,
    timeout: float | None,
) -> int:
    """Runs populations of up to `population` trials (see `study.run_batches`). Its batches of
    one size share one program (`rl.engines.compiled.ProgramCache`)."""
    from rl.engines.compiled import ProgramCache

    programs = ProgramCache()

    def run_population(missing: int) -> list[int]:
        trials = [study.ask() for _ in range(min(population, missing))]
        _run_population(study, space, config, trials, programs)
        return [trial.number for trial in trials]

    return run_batches(study, n_trials, timeout, run_population)


def _run_population(
    study: Any, space: SearchSpace, config: TrialConfig, trials: list, programs: ProgramCache
) -> None:
    """Samples every trial, trains the valid ones as one population, tells each its result."""
    import tensorflow as tf

    from rl import training
    from rl.tune.objective import InvalidTrial

    base = trial_hparams(config, {})
    members: dict[str, TrialReporter] = {}  # run dir -> reporter, in training order
    seeds, hparams, valid = [], [], []
    for trial in trials:
        trial.set_user_attr("tuner_host", socket.gethostname())
        trial.set_user_attr("tuner_pid", os.getpid())
        values = {param.key: suggest(trial, param) for param in space.params}
        try:
            trial_hp = trial_hparams(config, values)
        except UserError as error:
            _fail(study, trial, InvalidTrial(str(error)))
            continue
        valid.append(trial)
        for index, seed in enumerate(config.seeds):
            directory = run_dir(config.output_dir, trial.number, seed)
            members[directory] = TrialReporter(trial, index, trial_hp.train_steps)
            seeds.append(seed)
            hparams.append(trial_hp)
    if not valid:
        return
    reporter = PopulationReporter(members)
    try:
        training.train(
            base,
            list(members),
            seeds,
            config.hparams_set,
            callbacks=[reporter],
            run_hparams=hparams,
            programs=programs,
        )
    except Diverged as error:  # non-finite losses or parameters (`halt_on_nonfinite`)
        for directory in error.run_dirs:
            number = members[directory].trial.number
            reporter.stopped.setdefault(number, str(error).splitlines()[0])
    except (FloatingPointError, tf.errors.InvalidArgumentError) as error:
        for trial in valid:
            reporter.stopped.setdefault(trial.number, str(error).splitlines()[0])
    due = evaluations_due(base)
    for trial in valid:
        own = [member for member in members.values() if member.trial.number == trial.number]
        _tell(study, trial, own, due, config.last_k, reporter.stopped.get(trial.number))


def _tell(
    study: Any, trial: Any, own: list[TrialReporter], due: int, last_k: int, stopped: str | None
) -> None:
    """Tells the study the trial's result: pruned, failed, or the mean score of its seeds."""
    from optuna.trial import TrialState

    if stopped == "pruned":
        study.tell(trial, state=TrialState.PRUNED)
        return
    try:
        if stopped is not None:
            raise Diverged(stopped)
        scores = [run_score(member.returns, due, last_k) for member in own]
        value = sum(scores) / len(scores)
        if not math.isfinite(value):
            raise Diverged(f"objective {value}")
    except Diverged as error:
        _fail(study, trial, error)
        return
    study.tell(trial, value)


def _fail(study: Any, trial: Any, error: Exception) -> None:
    """A failed trial that counts (its values were tried), as `study.run_worker` records it."""
    from optuna.trial import TrialState

    trial.set_user_attr("counted", True)
    trial.set_user_attr("failure", f"{type(error).__name__}: {error}")
    print(f"[tune] trial {trial.number} failed: {type(error).__name__}: {error}")
    study.tell(trial, state=TrialState.FAIL)
