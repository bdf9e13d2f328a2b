"""`python -m rl.export RUN_DIR [--step N] [--output DIR] [--format saved_model|tflite]`: writes the
run's policy as a SavedModel or a TFLite file (docs/export.md).
"""

from __future__ import annotations

import argparse
import sys

from rl.errors import UserError, user_error_exit
from rl.utils.command_line import UserErrorParser

PROG = "python -m rl.export"


def build_parser() -> argparse.ArgumentParser:
    p = UserErrorParser(
        prog=PROG, description="Export a run's policy as a SavedModel or TFLite file."
    )
    p.add_argument("run_dir", help="A run dir written by train.py, e.g. runs/dqn/run_0.")
    p.add_argument(
        "--step",
        default="latest",
        help="Which checkpoint: an env step that is kept, latest (default) or best.",
    )
    p.add_argument(
        "--output",
        help="Directory to write (default RUN_DIR/export/<step>, or export/tflite_<step>).",
    )
    p.add_argument("--format", default="saved_model", help="saved_model (default) or tflite.")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        import rl  # noqa: F401  (fills the registries: agents, envs, hparams sets)
        from rl.export.export_run import export_run

        exported = export_run(args.run_dir, args.step, args.output, args.format)
    except UserError as error:
        return user_error_exit(PROG, error)
    print(
        f"exported the policy at {exported.step:,} env steps to {exported.path} "
        f"(signatures: {', '.join(exported.signatures)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
