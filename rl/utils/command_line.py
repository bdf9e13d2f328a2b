"""The argument parser of every command (train.py, `python -m rl.plot`, `rl.tune`, `rl.repro`,
`rl.export`): a bad flag raises `UserError`, which the command prints as one line before it
exits 2. (argparse itself would print its whole usage first, and exit on its own.)"""

from __future__ import annotations

import argparse

from rl.errors import UserError
from rl.utils.private_apis import ArgumentContainer

BOOL_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


class UserErrorParser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` whose errors are `UserError`s that point at `--help`."""

    def error(self, message: str) -> None:
        raise UserError(f"{message} (see {self.prog} --help)")


def parse_bool(text: str) -> bool:
    """`True`/`False` in any case, or yes/no, 1/0: the type of a boolean flag."""
    if text.lower() not in BOOL_WORDS:
        raise argparse.ArgumentTypeError(f"expected True or False, got {text!r}")
    return BOOL_WORDS[text.lower()]


def add_bool_flag(parser: ArgumentContainer, name: str, default: bool, help_text: str) -> None:
    """`--flag`, `--flag True` and `--flag=false` all work."""
    parser.add_argument(
        f"--{name}",
        nargs="?",
        const=True,
        default=default,
        type=parse_bool,
        metavar="BOOL",
        help=help_text,
    )
