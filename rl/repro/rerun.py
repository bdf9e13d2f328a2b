"""`python -m rl.repro.rerun HPARAMS_JSON RUN_DIR SEED HPARAMS_SET`: trains one run from a saved
hparams.json, in a fresh process, for `rl.repro check`. From the exact saved values, so nothing
is lost re-typing them; in a fresh process because TF's global seeds, determinism and caches are
per process and a rerun in the same one could hide a difference.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: python -m rl.repro.rerun HPARAMS_JSON RUN_DIR SEED SET", file=sys.stderr)
        return 2
    hparams_path, run_dir, seed, hparams_set = argv
    import rl  # noqa: F401  (fills the registries)
    from rl import training
    from rl.errors import UserError, user_error_exit
    from rl.hparams import HParams

    try:
        with open(hparams_path, encoding="utf-8") as f:
            hparams = HParams.from_json(f.read())
        training.train(hparams, [run_dir], [int(seed)], hparams_set)
    except UserError as error:
        return user_error_exit("rl.repro.rerun", error)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
