"""`python -m rl.repro check RUN_DIR [--steps N]` and `python -m rl.repro diff RUN_A RUN_B`.

Exit status: check 0 deterministic, 1 not; diff 0; a user mistake (bad path, bad flag) 2 with
one line on stderr, before anything is trained. See docs/reproducibility.md.
"""

from __future__ import annotations

import argparse
import sys

from rl.errors import UserError, user_error_exit
from rl.utils.command_line import UserErrorParser

PROG = "python -m rl.repro"


def build_parser() -> argparse.ArgumentParser:
    p = UserErrorParser(prog=PROG, description="Check that a run reproduces; compare two runs.")
    commands = p.add_subparsers(
        dest="command", metavar="{check,diff}", parser_class=UserErrorParser
    )
    check = commands.add_parser(
        "check",
        help="Retrain the first N env steps twice and compare every checkpoint bit for bit.",
    )
    check.add_argument("run_dir", help="A run dir written by train.py, e.g. runs/dqn/run_0.")
    check.add_argument(
        "--steps",
        type=int,
        help="Env steps to retrain (default: 2 x checkpoint_every, at most train_steps).",
    )
    diff = commands.add_parser("diff", help="What differs between two runs.")
    diff.add_argument("run_a")
    diff.add_argument("run_b")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UserError(f"give a command: check or diff (see {PROG} --help)")
        import rl  # noqa: F401  (fills the registries: hparams changes, env specs)

        if args.command == "check":
            from rl.repro.check import check

            return check(args.run_dir, args.steps)
        from rl.repro.diff import diff

        return diff(args.run_a, args.run_b)
    except UserError as error:
        return user_error_exit(PROG, error)


if __name__ == "__main__":
    sys.exit(main())
