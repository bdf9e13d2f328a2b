#!/usr/bin/env python3
"""Train, resume or test an agent: flags -> hparams -> engine and the one loop, run by --sys.

    python train.py --hparams dqn_cartpole --output_dir runs/dqn
    python train.py --hparams dqn_cartpole --output_dir runs/dqn --training False
    python train.py --list

A user mistake exits with status 2 and one line on stderr, before anything is written.
Adding an algorithm never edits this file: it composes registered parts only.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import time


def main(argv: list[str] | None = None) -> int:
    # `kill -USR1 <pid>` prints every thread's Python stack to stderr: how to see where a run
    # (or a test's train.py subprocess that did not exit in time) is stuck, without stopping it.
    # The process's own stderr: under pytest's capsys (in-process train.main) sys.stderr has no
    # file descriptor, and faulthandler needs one.
    faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)
    # A SIGTERM during the imports (seconds) is noted, and honoured once the run can stop
    # properly (rl/preemption.py); signals can only be set from the main thread.
    early_sigterm: list[float] = []
    if threading.current_thread() is not threading.main_thread():
        return _main(argv, early_sigterm)
    previous = signal.signal(signal.SIGTERM, lambda *_: early_sigterm.append(time.monotonic()))
    try:
        return _main(argv, early_sigterm)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None, early_sigterm: list[float]) -> int:
    from rl.cli import build_parser  # rl/__init__.py imports TensorFlow with stderr muted
    from rl.errors import (
        ACTORS_UNAVAILABLE_EXIT,
        DIVERGED_EXIT,
        PREEMPTED_EXIT,
        ActorsUnavailable,
        Diverged,
        Preempted,
        UserError,
        user_error_exit,
    )
    from rl.preemption import PreemptionNotice

    try:
        args = build_parser().parse_args(argv)
        from rl.utils.logger import configure_logging

        configure_logging(args.log_level)
        from rl.utils import compile_cache

        compile_cache.enable()  # the loop sets it up before a compile (rl/utils/compile_cache.py)
        if not args.preemption_grace > 0:
            raise UserError(f"--preemption_grace must be > 0 seconds, got {args.preemption_grace}")
        # SIGTERM (a preemption) = checkpoint and go, from here on (rl/preemption.py).
        received_at = early_sigterm[0] if early_sigterm else None
        with PreemptionNotice(args.preemption_grace).installed(received_at) as preemption:
            return _run(args, preemption)
    except UserError as error:
        return user_error_exit("train.py", error)
    except Preempted:
        print(
            f"train.py: stopped by SIGTERM; every run saved a checkpoint (status "
            f"{PREEMPTED_EXIT}): the same command continues it",
            file=sys.stderr,
        )
        return PREEMPTED_EXIT
    except ActorsUnavailable as error:  # every actor node lost (docs/workers.md)
        print(
            f"train.py: {error}; every run saved a checkpoint (status "
            f"{ACTORS_UNAVAILABLE_EXIT}): the same command continues it once the cluster has "
            "such nodes",
            file=sys.stderr,
        )
        return ACTORS_UNAVAILABLE_EXIT
    except Diverged as error:
        print(f"train.py: {error}", file=sys.stderr)
        return DIVERGED_EXIT
    except KeyboardInterrupt:
        print("train.py: interrupted; the last checkpoint is intact", file=sys.stderr)
        return 130
    except Exception as error:  # a failed worker process: one line, status 1 (docs/workers.md)
        from rl.errors import worker_error_line

        line = worker_error_line(error)
        if line is None:
            raise
        print(f"train.py: {line}; the last checkpoint is intact", file=sys.stderr)
        return 1


def _run(args, preemption) -> int:
    import rl  # noqa: F401  (fills the registries)
    from rl import registry
    from rl.cli import hparams_from_args
    from rl.errors import UserError
    from rl.hparams.compiled_path import runs_compiled
    from rl.utils.run_dir import check_run_dir_shape, check_writable, run_dir_path

    if args.list:
        for kind, reg in registry.ALL.items():
            print(f"{kind}: {', '.join(reg.names()) or '(none)'}")
        from rl.cli import hparams_chain_lines

        print("\n".join(hparams_chain_lines()))
        return 0
    if args.show_hparams:  # prints, writes nothing
        if not args.hparams:
            raise UserError(
                "--show_hparams needs --hparams, e.g. --hparams dqn_tiny --show_hparams"
            )
        from rl.cli import show_hparams_lines

        print("\n".join(show_hparams_lines(args, _check_values)))
        return 0
    system = registry.get_system(args.sys)  # an unknown --sys lists the registered ones
    if hasattr(system, "launch"):  # --sys tpu/gke: validate everything, render, submit (or print)
        if args.winner is not None and "://" not in args.winner:
            raise UserError(
                f"--winner {args.winner} is on this machine and the Pods cannot read it; copy "
                "it to gs:// and give that path"
            )
        from rl.cli import build_parser

        return system.launch(args, build_parser(), check_values=_check_values)
    from rl.systems.kube_launcher import reject_launch_flags

    reject_launch_flags(args)  # e.g. --image with --sys local would be silently ignored
    if not args.hparams:
        raise UserError("--hparams is required, e.g. --hparams dqn_cartpole (see --list)")
    if not args.output_dir:
        raise UserError("--output_dir is required, e.g. --output_dir runs/my_run")
    if args.copies < 1:
        raise UserError(f"--copies must be >= 1, got {args.copies}")
    if args.training and args.checkpoint != "latest":
        raise UserError(
            f"--checkpoint {args.checkpoint} chooses what test mode plays; it needs --training "
            "False (training always resumes from the latest checkpoint)"
        )
    if args.test_episodes < 1:
        raise UserError(f"--test_episodes must be >= 1, got {args.test_episodes}")
    if not args.training and args.hparam_override:
        from rl.hparams.override_parser import split_items

        fixed = [key for key, _ in split_items(args.hparam_override) if not key.startswith("eval.")]
        if fixed:
            raise UserError(
                f"--training False plays each run with the hparams it trained with; "
                f"--hparam_override may change only eval.* keys there, not {', '.join(fixed)}"
            )
    if args.render:
        if args.training:
            raise UserError(
                "--render shows test episodes in a window and needs --training False; to watch "
                "training, use --record_video True (videos go to run_<i>/videos/)"
            )
        from rl.utils.video import check_render_possible

        message = check_render_possible("human")
        if message:
            raise UserError(message)

    hparams = hparams_from_args(args, _check_values)  # every name in it checked
    compiled = runs_compiled(hparams.env)  # TF-ops env: the compiled engine
    from rl.distribute.strategies import training_strategy

    agent = hparams.agent if "agent" in hparams.keys() else None
    strategy = training_strategy(args.strategy, agent, compiled, args.training)
    from rl.cli import worker_flags
    from rl.workers.checks import check_num_workers

    check_num_workers(worker_flags(args), hparams, compiled, strategy)
    check_writable(args.output_dir)

    run_dirs = [run_dir_path(args.output_dir, i) for i in range(args.copies)]
    for run_dir in run_dirs:
        check_run_dir_shape(run_dir)
    from rl.utils.run_dir_lock import locked_run_dirs

    # One training process per run dir (a second one exits 2), held until this process ends;
    # the checks below read the run dirs under it. Test mode only reads, and never locks.
    with locked_run_dirs(run_dirs if _writes_run_dirs(args, strategy) else []):
        return _check_and_run(args, hparams, compiled, strategy, run_dirs, preemption)


def _writes_run_dirs(args, strategy: str) -> bool:
    """Training writes its run dirs, except a non-chief MultiWorkerMirroredStrategy worker
    (it writes a scratch dir; rl/engines/in_process.py)."""
    from rl.distribute import worker_role
    from rl.distribute.strategies import shared_strategy

    return bool(args.training) and worker_role(shared_strategy(strategy)).is_chief


def _check_and_run(
    args, hparams, compiled: bool, strategy: str, run_dirs: list[str], preemption
) -> int:
    from rl import registry
    from rl.utils.checkpoint import CheckpointStore
    from rl.utils.files import join
    from rl.utils.run_dir import check_resume_compatible

    if args.training:
        for run_dir in run_dirs:
            declared = registry.get_hparams(args.hparams)()  # defaults of keys added since
            check_resume_compatible(run_dir, hparams, args.allow_hparams_change, declared)
            CheckpointStore(join(run_dir, "checkpoints"), 1).latest()  # damaged pointer -> 2
    else:
        from rl.utils.checkpoint_choice import select_checkpoint

        # --checkpoint latest | best | STEP must exist in every copy; each copy plays this one.
        checkpoints = [select_checkpoint(run_dir, args.checkpoint) for run_dir in run_dirs]

    from rl import training
    from rl.cli import overrides_as_given

    flags = training.Flags(
        record_video=args.record_video,
        render=args.render,
        strategy=strategy,
        num_workers=args.num_workers,
        ray_address=args.ray_address or os.environ.get("RAY_ADDRESS"),
        actor_resources=args.actor_resources,
        max_actor_restarts=args.max_actor_restarts,
        actor_wait_timeout=args.actor_wait_timeout,
        checkpoint=args.checkpoint,
    )
    seeds = [args.seed + i for i in range(args.copies)]
    # training.train and training.test check what the engine cannot do (training.check) first
    # thing, before they write; test mode's checkpoints are checked above for every copy.
    if args.training:  # every copy through the one loop (the compiled engine: one program)
        jobs = [
            lambda: training.train(
                hparams,
                run_dirs,
                seeds,
                args.hparams,
                flags,
                preemption=preemption,
                overrides=overrides_as_given(args),
            )
        ]
    else:
        jobs = [
            lambda i=i: training.test(
                hparams,
                run_dirs[i],
                seeds[i],
                args.test_episodes,
                checkpoints[i],
                flags,
                args.hparam_override,
            )  # fmt: skip
            for i in range(args.copies)
        ]
    registry.get_system(args.sys)(jobs)
    return 0


def _check_values(hparams) -> None:
    """Value ranges the type system cannot express (`rl.cli.check_values`)."""
    from rl.cli import check_values

    check_values(hparams)


if __name__ == "__main__":
    sys.exit(main())
