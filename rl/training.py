"""Training and test mode as train.py runs them: the engine chosen from the hparams and flags,
driven by the one loop (`rl.loop`). `engine_name` is the one place that choice is made.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rl import loop, test_mode
from rl.engines import compiled, in_process
from rl.engines.env_checks import check_agent_takes_env, check_hindsight_replay
from rl.errors import UserError
from rl.evaluation import EvalResult
from rl.hparams import HParams
from rl.hparams.compiled_path import runs_compiled
from rl.preemption import PreemptionNotice
from rl.utils.checkpoint import CheckpointStore
from rl.utils.checkpoint_choice import best_evaluation
from rl.utils.run_dir import run_label, saved_hparams
from rl.workers.checks import uses_apex, uses_asynchronous_actors
from rl.workers.waiting import DEFAULT_ACTOR_WAIT_SECONDS


@dataclass(frozen=True)
class Flags:
    """The train.py flags that decide how a run trains."""

    record_video: bool = False
    render: bool = False
    strategy: str = "default"
    num_workers: int = 1
    ray_address: str | None = None  # Ray actors: the cluster to join (None: Ray starts here)
    actor_resources: dict[str, float] | None = None
    max_actor_restarts: int = 3
    actor_wait_timeout: float = DEFAULT_ACTOR_WAIT_SECONDS  # no node for the actors: give up
    checkpoint: str = "latest"  # what test mode plays: latest, best or an env step


def engine_name(hparams: HParams, flags: Flags) -> str:
    """ "compiled", "impala", "apex" or "in_process" (see the module docstring)."""
    if runs_compiled(hparams.env):
        return "compiled"
    if flags.num_workers > 1:
        if uses_asynchronous_actors(hparams):
            return "impala"
        if uses_apex(hparams):
            return "apex"
    return "in_process"


def check(hparams: HParams, flags: Flags) -> None:
    """UserError, before anything is written, for what the chosen engine cannot do (not an unknown
    agent: a `module:Class` env may register the agent it trains)."""
    check_hindsight_replay(hparams, flags.num_workers)
    if runs_compiled(hparams.env):
        compiled.check_compiled(hparams, flags.record_video, flags.render)
    else:
        check_agent_takes_env(hparams)


def train(
    hparams: HParams,
    run_dirs: Sequence[str],
    seeds: Sequence[int],
    hparams_set: str,
    flags: Flags | None = None,
    callbacks: Sequence[loop.EvaluationCallback] = (),
    preemption: PreemptionNotice | None = None,
    run_hparams: Sequence[HParams] | None = None,
    overrides: dict[str, Any] | None = None,
    programs: compiled.ProgramCache | None = None,
) -> list[loop.TrainResult]:
    """`rl.loop.train` with the engine `engine_name` picks (`programs`: a tuner's cache)."""
    flags = flags or Flags()
    check(hparams, flags)
    if run_hparams is not None:
        _check_population(hparams, run_hparams)
    name = engine_name(hparams, flags)
    group_runs = extra_state = None
    if name == "compiled":
        build = functools.partial(compiled.CompiledEngine, hparams, programs=programs)
        group_runs = functools.partial(compiled.group_runs, hparams)
    elif name in ("apex", "impala"):
        from rl.engines.apex import ApexEngine
        from rl.engines.impala import ImpalaEngine

        engine_class = ImpalaEngine if name == "impala" else ApexEngine
        extra_state = engine_class.extra_state

        def build(runs):
            return engine_class(
                hparams,
                runs[0],
                flags.num_workers,
                flags.ray_address,
                flags.actor_resources,
                flags.max_actor_restarts,
                flags.actor_wait_timeout,
            )
    else:

        def build(runs):
            return in_process.InProcessEngine(
                hparams, runs[0], flags.record_video, flags.strategy, flags.num_workers
            )

    return loop.train(
        hparams,
        run_dirs,
        seeds,
        hparams_set,
        build,
        group_runs=group_runs,
        callbacks=callbacks,
        extra_state=extra_state,
        preemption=preemption,
        run_hparams=run_hparams,
        overrides=overrides,
    )


def _check_population(hparams: HParams, run_hparams: Sequence[HParams]) -> None:
    """UserError unless the runs differ from `hparams` only where a population may."""
    from rl.compiled.population import check_members

    if not runs_compiled(hparams.env):
        raise UserError(
            f"a population trains as one compiled program, which needs a TF-ops env "
            f"(tf/...), not {hparams.env!r}; train the trials one by one (--population 1)"
        )
    check_members(hparams, run_hparams)


def test(
    hparams: HParams,
    run_dir: str,
    seed: int,
    episodes: int,
    checkpoint: tuple[CheckpointStore, dict[str, Any]],
    flags: Flags | None = None,
    eval_override: str = "",
) -> EvalResult:
    """Test mode: `checkpoint` (the store and pointer that `select_checkpoint` chose for
    `flags.checkpoint`) of `run_dir`, with its saved hparams and `eval_override`."""
    flags = flags or Flags()
    hparams = saved_hparams(run_dir, defaults=hparams) or hparams
    if eval_override:
        hparams = hparams.copy()
        hparams.override(eval_override)
        hparams.freeze()
    check(hparams, flags)
    if flags.checkpoint == "best":
        best = best_evaluation(checkpoint[0])
        print(
            f"[{run_label(run_dir)}] the best policy: its evaluation at "
            f"{best['step']:,} env steps returned {best['return_mean']:.2f} ± "
            f"{best['return_std']:.2f} over {best['episodes']} episodes"
        )
    if runs_compiled(hparams.env):

        def play(test_seed, tensorboard):
            return compiled.play_test(hparams, seed, checkpoint, test_seed, episodes)
    else:

        def play(test_seed, tensorboard):
            return in_process.play_test(
                hparams, run_dir, seed, checkpoint, test_seed, tensorboard, episodes,
                flags.render, flags.record_video,
            )  # fmt: skip

    return test_mode.play_and_report(run_dir, seed, play)
