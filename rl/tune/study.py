"""The study and one worker's loop over it: claim a trial, run it, record it, until the study
has its `--trials` trials; any number of workers may run it on one storage.

A trial counts unless its failure says nothing about its values: a dead worker's trial is
queued again with the same values, a claim past the budget is failed as surplus
(docs/tuning.md). Diverged and invalid trials are results: they count, as FAIL.
"""

from __future__ import annotations

import functools
import os
import socket
import time
from collections.abc import Callable
from typing import Any

from optuna.storages import RetryHeartbeatStaleTrialCallback

from rl.errors import Diverged, UserError
from rl.tune.objective import InvalidTrial, TrialConfig, objective
from rl.tune.search_space import SearchSpace
from rl.tune.storage import retry_stale_trial
from rl.utils.processes import pid_alive
from rl.utils.seeding import derive_seed

SAMPLERS = ("tpe", "random")
PRUNERS = ("median", "halving", "none")


class Surplus(Exception):
    """This claim came after the study had its `--trials` trials (another worker raced it)."""


def make_sampler(name: str, startup_trials: int, seed: int) -> Any:
    """Multivariate TPE (after `startup_trials` random ones), or random search."""
    import optuna

    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(
        n_startup_trials=startup_trials, multivariate=True, constant_liar=True, seed=seed
    )


def make_pruner(name: str, startup_trials: int, warmup_steps: int) -> Any:
    """The median rule (prune below the median of earlier trials at the same step, once past
    `warmup_steps` of the trial's step axis), successive halving, or none."""
    import optuna

    if name == "median":
        return optuna.pruners.MedianPruner(
            n_startup_trials=startup_trials, n_warmup_steps=warmup_steps
        )
    if name == "halving":
        return optuna.pruners.SuccessiveHalvingPruner()
    return optuna.pruners.NopPruner()


def open_study(storage: Any, study_name: str, identity: dict[str, Any], sampler, pruner) -> Any:
    """Creates the study, or loads it; UserError if it was made by a different search."""
    import optuna

    study = optuna.create_study(
        storage=storage,
        study_name=study_name,
        direction="maximize",
        sampler=sampler,
        pruner=pruner,
        load_if_exists=True,
    )
    saved = study.user_attrs
    if not saved:
        for key, value in identity.items():
            study.set_user_attr(key, value)
        return study
    for key, value in identity.items():  # another search's trials must not mix with these
        if key in saved and saved[key] != value:
            raise UserError(
                f"study {study_name!r} was made with {key}={saved[key]!r}, not {value!r}; "
                "give the same flags to continue it, or another --study_name / --output_dir"
            )
    return study


def counted_trials(study: Any) -> list[Any]:
    """Trials that count toward `--trials`: all but the failures not marked counted."""
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False)
    return [t for t in trials if t.state != TrialState.FAIL or t.user_attrs.get("counted", False)]


def fail_dead_trials(study: Any) -> list[int]:
    """Marks FAIL (and queues again) every RUNNING trial of a dead worker: on this host, one
    whose process is gone; elsewhere, Optuna's heartbeat. Returns the numbers it failed."""
    import optuna
    from optuna.trial import TrialState

    host = socket.gethostname()
    failed = []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        attrs = trial.user_attrs
        if attrs.get("tuner_host") != host or pid_alive(int(attrs.get("tuner_pid", -1))):
            continue
        try:
            study.tell(trial.number, state=TrialState.FAIL)
        except (ValueError, RuntimeError):  # another worker failed it first
            continue
        retry_stale_trial(study, study.get_trials(deepcopy=True)[trial.number])
        failed.append(trial.number)
    before = {t.number for t in study.get_trials(deepcopy=False, states=(TrialState.FAIL,))}
    optuna.storages.fail_stale_trials(study)
    after = {t.number for t in study.get_trials(deepcopy=False, states=(TrialState.FAIL,))}
    return failed + sorted(after - before)


def _worker_objective(
    trial: Any, space: SearchSpace, config: TrialConfig, n_trials: int, mine: list[int]
) -> float:
    mine.append(trial.number)
    trial.set_user_attr("tuner_host", socket.gethostname())
    trial.set_user_attr("tuner_pid", os.getpid())
    frozen = trial.study.get_trials(deepcopy=False)[trial.number]
    retried = RetryHeartbeatStaleTrialCallback.retried_trial_number(frozen) is not None
    if not retried:  # a dead worker's trial queued again takes that trial's place
        earlier = [t for t in counted_trials(trial.study) if t.number < trial.number]
        if len(earlier) >= n_trials:
            trial.set_user_attr("surplus", True)
            raise Surplus(f"trial {trial.number}: the study has its {n_trials} trials")
    try:
        return objective(trial, space, config)
    except (Diverged, InvalidTrial) as error:
        trial.set_user_attr("counted", True)
        trial.set_user_attr("failure", f"{type(error).__name__}: {error}")
        print(f"[tune] trial {trial.number} failed: {type(error).__name__}: {error}")
        raise


def run_worker(
    study: Any, space: SearchSpace, config: TrialConfig, n_trials: int, timeout: float | None
) -> int:
    """Runs trials one at a time through `study.optimize` (see `run_batches`)."""

    def run_one(missing: int) -> list[int]:
        mine: list[int] = []
        trial_objective = functools.partial(
            _worker_objective, space=space, config=config, n_trials=n_trials, mine=mine
        )
        study.optimize(trial_objective, n_trials=1, catch=(Diverged, InvalidTrial, Surplus))
        return mine

    return run_batches(study, n_trials, timeout, run_one)


def run_batches(
    study: Any, n_trials: int, timeout: float | None, run_batch: Callable[[int], list[int]]
) -> int:
    """Calls `run_batch(missing)` (it runs trials, returns their numbers) until the study counts
    `n_trials` or `timeout` seconds passed; returns how many trials this worker ran."""
    deadline = None if timeout is None else time.monotonic() + timeout
    ran = 0
    while missing := trials_to_run(study, n_trials):
        if deadline is not None and time.monotonic() >= deadline:
            print(f"[tune] --timeout reached after {ran} trials; the same command continues")
            break
        numbers = run_batch(missing)
        ran += len(numbers)
        for number in numbers:
            print_trial(study.get_trials(deepcopy=False)[number])
    return ran


def trials_to_run(study: Any, n_trials: int) -> int:
    """Fails (and queues again) dead workers' trials, saying so; returns how many trials the
    study still needs run: those queued again (WAITING) plus those it lacks of `n_trials`."""
    from optuna.trial import TrialState

    for number in fail_dead_trials(study):
        print(f"[tune] trial {number}: its worker died; marked failed and queued again")
    waiting = study.get_trials(deepcopy=False, states=(TrialState.WAITING,))
    return max(0, n_trials - len(counted_trials(study))) + len(waiting)


def print_trial(trial: Any) -> None:
    from optuna.trial import TrialState

    values = ", ".join(f"{key}={value!r}" for key, value in trial.params.items())
    score = "" if trial.value is None else f" value {trial.value:.2f}"
    if trial.state == TrialState.PRUNED and trial.intermediate_values:
        step = max(trial.intermediate_values)
        score = f" at step {step:,} (last evaluation {trial.intermediate_values[step]:.2f})"
    print(f"[tune] trial {trial.number} {trial.state.name}{score} ({values})")


def sampler_seed(seed: int, worker: str) -> int:
    """Each worker its own sampler stream (identical streams would propose identical trials)."""
    return derive_seed(seed, "sampler", worker) % (2**31)
