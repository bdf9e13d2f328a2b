"""The command line of `python -m rl.tune`: flags, the checks made before anything is written
(exit 2 and one line), then the study (docs/tuning.md).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import types
import warnings
from typing import TYPE_CHECKING, Any

from rl.errors import DIVERGED_EXIT, Diverged, UserError, user_error_exit
from rl.hparams.compiled_path import runs_compiled
from rl.utils.command_line import UserErrorParser, add_bool_flag
from rl.utils.files import join

if TYPE_CHECKING:
    import optuna

    from rl.tune.objective import TrialConfig

PROG = "python -m rl.tune"


def build_parser() -> argparse.ArgumentParser:
    from rl.tune.study import PRUNERS, SAMPLERS

    p = UserErrorParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--hparams", required=True, help="registered hparams set to tune")
    p.add_argument("--space", required=True, help="registered search space (train.py --list)")
    p.add_argument("--trials", type=int, help="trials the study runs in all (not with --pbt)")
    p.add_argument("--output_dir", required=True, help="study.db, trial run dirs, results")
    p.add_argument("--seeds_per_trial", type=int, default=2, help="tuning seeds of each trial")
    p.add_argument(
        "--population", type=int, default=1,
        help="TF-ops envs: trials trained at once as ONE compiled program (they may differ "
        "only in numeric keys such as lr, ent_coef, gamma; docs/tuning.md)",
    )  # fmt: skip
    add_bool_flag(
        p, "pbt", False, "population-based training of the --population members inside their "
        "program: the bottom ones copy the top ones and perturb their values (docs/tuning.md)",
    )  # fmt: skip
    p.add_argument("--pbt_interval", type=int, help="--pbt: env steps between rounds (2 evals)")
    p.add_argument("--pbt_quantile", type=float, help="--pbt: bottom copies top fraction (0.25)")
    p.add_argument("--pbt_resample", type=float, help="--pbt: explore's redraw chance (0.25)")
    p.add_argument("--seed", type=int, default=0, help="first tuning seed (seeds seed..)")
    p.add_argument("--train_steps", type=int, default=None, help="env steps of each run")
    p.add_argument("--hparam_override", default="", help="applied to the set before each trial")
    p.add_argument("--keys", default="", help="tune only these keys of the space (comma list)")
    p.add_argument("--timeout", type=float, default=None, help="no trial starts after (s)")
    p.add_argument("--sampler", default="tpe", choices=SAMPLERS)
    p.add_argument("--pruner", default="median", choices=PRUNERS)
    p.add_argument("--startup_trials", type=int, default=5, help="random trials before TPE")
    p.add_argument(
        "--warmup_steps", type=int, default=None,
        help="median pruner: env steps of a trial before it may be pruned (default: a third of "
        "a run's train_steps; early evaluations are the noisiest)",
    )  # fmt: skip
    p.add_argument("--last_k", type=int, default=3, help="evaluations averaged per run")
    p.add_argument("--top_k", type=int, default=3, help="best trials re-run on fresh seeds")
    p.add_argument("--fresh_seeds", type=int, default=5, help="fresh seeds of the re-run")
    p.add_argument("--storage", default=None, help="Optuna storage URL (default: SQLite file)")
    p.add_argument("--study_name", default=None, help="default: <hparams>-<space>")
    add_bool_flag(
        p, "select", True, "at the end, re-run the top-k on fresh seeds and write the winner"
    )
    add_bool_flag(
        p,
        "publish",
        False,
        "also write the winner into this package as the hparams set <hparams>_tuned "
        "(rl/hparams/tuned/); by default it stays in --output_dir (winner.json)",
    )
    p.add_argument("--sys", default="local", choices=("local", "gke"))
    p.add_argument("--workers", type=int, default=1, help="--sys gke: worker Pods")
    p.add_argument("--image", default=None, help="--sys gke: container image")
    p.add_argument("--namespace", default="default", help="--sys gke: Kubernetes namespace")
    add_bool_flag(p, "dry_run", False, "--sys gke: print the manifests, send nothing")
    p.add_argument("--storage_secret", default=None, help="--sys gke: Secret with the DB password")
    p.add_argument("--kube_context", default=None, help="--sys gke: kubeconfig context")
    p.add_argument("--job_name", default=None, help="--sys gke: the Job's name")
    return p


def _check_numbers(args: argparse.Namespace) -> None:
    from rl.tune.winners import FRESH_SEED_BASE

    if args.pbt and args.trials is not None:
        raise UserError("--pbt trains the --population members, not --trials: drop --trials")
    if not args.pbt and args.trials is None:
        raise UserError("--trials is required: how many trials the study runs in all")
    counts = ("trials", "seeds_per_trial", "startup_trials", "last_k", "top_k", "population")
    for flag in (*counts, "fresh_seeds", "workers"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise UserError(f"--{flag} must be >= 1, got {getattr(args, flag)}")
    if args.seed < 0 or args.seed + args.seeds_per_trial > FRESH_SEED_BASE:
        raise UserError(
            f"tuning seeds {args.seed}..{args.seed + args.seeds_per_trial - 1} must lie in "
            f"0..{FRESH_SEED_BASE - 1} (fresh judging seeds start at {FRESH_SEED_BASE})"
        )
    if args.warmup_steps is not None and args.warmup_steps < 0:
        raise UserError(f"--warmup_steps must be >= 0, got {args.warmup_steps}")
    if args.timeout is not None and args.timeout <= 0:
        raise UserError(f"--timeout must be > 0 seconds, got {args.timeout}")
    launch_flags = (args.image, args.kube_context, args.job_name, args.dry_run, args.storage_secret)
    if args.sys == "local" and (args.workers != 1 or any(launch_flags)):
        raise UserError(
            "--workers, --image, --kube_context, --job_name, --storage_secret and --dry_run "
            "are for --sys gke; locally, start the same command several times with one "
            "--storage (docs/tuning.md)"
        )


def prepare(args: argparse.Namespace) -> dict[str, Any]:
    """Every check that needs no writing; returns what the study needs."""
    import rl  # noqa: F401  (fills the registries)
    from rl import registry
    from rl.tune.objective import TrialConfig, evaluations_due, trial_hparams
    from rl.tune.population import check_population_space
    from rl.tune.storage import default_url, parse_storage
    from rl.utils.run_dir import check_writable

    _check_numbers(args)
    space = registry.get_search_space(args.space)
    keys = [key.strip() for key in args.keys.split(",") if key.strip()]
    if keys:
        space = space.restricted(keys)
    # Absolute, as the loop's console lines name run dirs; gs:// as given.
    output_dir = args.output_dir if "://" in args.output_dir else os.path.abspath(args.output_dir)
    seeds = tuple(range(args.seed, args.seed + args.seeds_per_trial))
    config = TrialConfig(
        args.hparams, args.hparam_override, args.train_steps, seeds, args.last_k, output_dir
    )
    base = trial_hparams(config, {})  # the set, --hparam_override, --train_steps: all checked
    space.check_against(base, args.hparams)
    check_population_space(space, args.population)
    if args.population > 1 and not runs_compiled(base.env):
        raise UserError(
            f"--population {args.population} trains trials as one compiled program, which needs "
            f"a TF-ops env (tf/...), not {base.env!r}; use --population 1"
        )
    pbt = _pbt_config(args, base, space)
    evaluations = evaluations_due(base)
    if args.last_k > evaluations:
        raise UserError(
            f"--last_k {args.last_k} is more than the {evaluations} evaluations of a run; "
            "lower it or raise --train_steps"
        )
    if "://" in args.output_dir and args.storage is None:
        raise UserError(
            f"--output_dir {args.output_dir} is not local, so the default SQLite study cannot "
            "live in it; give --storage (postgresql://..., grpc://HOST:PORT)"
        )
    check_writable(args.output_dir)
    storage = parse_storage(args.storage or default_url(args.output_dir), args.storage is None)
    identity = {
        "hparams_set": args.hparams,
        "space": args.space,
        "keys": ",".join(space.keys()),
        "seeds": list(config.seeds),
        "train_steps": base.train_steps,
        "base_override": args.hparam_override,
        "last_k": args.last_k,
    }
    return {"space": space, "config": config, "storage": storage, "identity": identity, "pbt": pbt}


def _pbt_config(args: argparse.Namespace, base: Any, space: Any) -> Any:
    """The checked `PBTConfig` (None without --pbt; UserError for --pbt_* flags without it)."""
    from rl.tune.pbt import PBTConfig, check_pbt_space
    from rl.tune.winners import FRESH_SEED_BASE

    if not args.pbt:
        flags = ("pbt_interval", "pbt_quantile", "pbt_resample")
        given = [f"--{flag}" for flag in flags if getattr(args, flag) is not None]
        if given:
            raise UserError(f"{', '.join(given)} only mean something with --pbt; add --pbt")
        return None
    if args.sys != "local":
        raise UserError("--pbt trains one population in this process: use --sys local")
    if args.seed + args.population > FRESH_SEED_BASE:
        raise UserError(f"--pbt: member seeds --seed.. must stay below {FRESH_SEED_BASE}")
    pbt = PBTConfig(
        interval=args.pbt_interval or 2 * base.eval.every_steps,
        quantile=0.25 if args.pbt_quantile is None else args.pbt_quantile,
        resample=0.25 if args.pbt_resample is None else args.pbt_resample,
        seed=args.seed,
    )
    check_pbt_space(space, base, args.population, pbt)
    return pbt


def run(args: argparse.Namespace) -> int:
    plan = prepare(args)
    if args.sys == "gke":
        from rl.tune.gke import launch_workers

        return launch_workers(args, plan, build_parser())
    return run_local(args, plan)


def run_local(args: argparse.Namespace, plan: dict[str, Any]) -> int:
    """One worker: open the study (creating it), run trials, then (`--select`) the winner."""
    import socket

    import tensorflow as tf

    from rl.tune import study as studies
    from rl.tune.storage import open_storage

    space, config, identity = plan["space"], plan["config"], plan["identity"]
    if plan["pbt"] is not None:
        return _run_pbt(args, plan)
    if args.storage is not None:  # a server that refuses us: exit 2 before anything is written
        storage = open_storage(plan["storage"])
    tf.io.gfile.makedirs(args.output_dir)
    if args.storage is None:
        storage = open_storage(plan["storage"])
    name = args.study_name or f"{args.hparams}-{args.space}"
    worker = f"{socket.gethostname()}:{os.getpid()}"
    sampler = studies.make_sampler(
        args.sampler, args.startup_trials, studies.sampler_seed(args.seed, worker)
    )
    warmup = identity["train_steps"] // 3 if args.warmup_steps is None else args.warmup_steps
    pruner = studies.make_pruner(args.pruner, args.startup_trials, warmup)
    study = studies.open_study(storage, name, identity, sampler, pruner)
    if args.population > 1:
        from rl.tune.population import run_population_worker

        run_population_worker(study, space, config, args.trials, args.population, args.timeout)
    else:
        studies.run_worker(study, space, config, args.trials, args.timeout)
    return _summarize_and_select(args, plan, study, name, config)


def _summarize_and_select(
    args: argparse.Namespace,
    plan: dict[str, Any],
    study: optuna.Study,
    name: str,
    config: TrialConfig,
) -> int:
    """After this worker's trials: the study's summary line and trials.csv, then (`--select`, once
    every trial has ended) the winner, scored again on fresh seeds, and its files."""
    from optuna.trial import TrialState

    from rl.tune import study as studies
    from rl.tune import winners

    trials = study.get_trials(deepcopy=False)
    counted = studies.counted_trials(study)
    unfinished = [t for t in counted if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    states = collections.Counter(trial.state.name for trial in counted)
    summary = ", ".join(f"{count} {state}" for state, count in sorted(states.items()))
    print(f"[tune] study {name!r}: {len(counted)} trials ({summary}); {len(trials)} records")
    winners.write_trials_csv(study, join(args.output_dir, "trials.csv"))
    if not args.select or unfinished or len(counted) < args.trials:
        return 0
    if not study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        print("[tune] no trial completed; nothing to select")
        return 0
    winners.write_plots(study, args.output_dir)
    seeds = winners.fresh_seeds(args.fresh_seeds)
    winner = winners.select_winner(study, config, args.top_k, seeds)
    winner_json, published = _write_winner(args, plan, winner, name, seeds)
    print(
        f"[tune] winner: trial {winner.trial_number} {winner.params}, fresh-seed score "
        f"{winner.mean:.2f} ± {winner.std:.2f}; train it: python train.py --hparams "
        f"{args.hparams} --winner {winner_json} --output_dir runs/{args.hparams}_tuned"
    )
    if published is not None:
        print(
            f"[tune] published as hparams set {winners.tuned_set_name(args.hparams)} in "
            f"{published}; regenerate docs/hparams_reference.md "
            "(.venv/bin/python -m rl.hparams.reference > docs/hparams_reference.md)"
        )
    return 0


def _run_pbt(args: argparse.Namespace, plan: dict[str, Any]) -> int:
    """--pbt: one population trained with PBT (no Optuna study), then its winner's schedules
    re-run on fresh seeds (--select) and written as winner.json (--publish: a set)."""
    import tensorflow as tf

    from rl.tune import winners
    from rl.tune.pbt import run_pbt

    config = plan["config"]
    tf.io.gfile.makedirs(args.output_dir)
    member, score, schedules = run_pbt(plan["space"], config, args.population, plan["pbt"])
    print(f"[tune] PBT winner: member {member}, tuning score {score:.2f}, values {schedules}")
    if not args.select:
        return 0
    seeds = winners.fresh_seeds(args.fresh_seeds)
    trial = types.SimpleNamespace(number=member, params=schedules)  # as winners re-runs a trial
    scores = winners.rerun_on_fresh_seeds(trial, config, seeds)
    winner = winners.FreshScore(member, score, schedules, scores)
    name = args.study_name or f"{args.hparams}-{args.space}-pbt"
    winner_json, _ = _write_winner(args, plan, winner, name, seeds)
    print(
        f"[tune] PBT winner's schedules on fresh seeds: {winner.mean:.2f} ± {winner.std:.2f}; "
        f"train it: python train.py --hparams {args.hparams} --winner {winner_json}"
    )
    return 0


def _write_winner(
    args: argparse.Namespace, plan: dict[str, Any], winner: Any, study_name: str, seeds: list[int]
) -> tuple[str, Any]:
    """Writes winner.json and (--publish) the `<set>_tuned` module; returns both paths."""
    from rl.tune import winners

    published = None
    if args.publish:
        url, train_steps = plan["storage"].url, plan["identity"]["train_steps"]
        published = winners.write_tuned_module(
            winner, plan["config"], study_name, url, seeds, train_steps
        )
    winner_json = join(args.output_dir, "winner.json")
    winners.write_winner_json(winner, winner_json, args.hparams, seeds, published)
    return winner_json, published


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        import optuna

        from rl.utils import compile_cache

        # stderr carries errors only: Optuna's INFO lines and experimental warnings stay out.
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        warnings.filterwarnings("ignore", module="optuna")
        compile_cache.enable()  # the loop sets it up before a compile (rl/utils/compile_cache.py)
        return run(args)
    except UserError as error:
        return user_error_exit(PROG, error)
    except Diverged as error:  # every PBT member (a study fails the trial instead)
        print(f"{PROG}: {str(error).splitlines()[0]}", file=sys.stderr)
        return DIVERGED_EXIT
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the same command continues the study", file=sys.stderr)
        return 130
