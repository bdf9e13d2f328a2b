"""Which checkpoint of a run dir a command uses: `--checkpoint latest|best|<env step>`.

Test mode, export, PBT's exploit step and the program cache all pick a checkpoint the same way,
and a missing one is the same one-line UserError whichever command asked.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from rl.errors import UserError
from rl.utils.checkpoint import CheckpointStore
from rl.utils.files import join, read_json
from rl.utils.run_dir import BEST_DIR


def select_checkpoint(run_dir: str, which: str) -> tuple[CheckpointStore, dict[str, Any]]:
    """The store and pointer of `--checkpoint` (latest, best or a kept env step), or UserError."""
    store = CheckpointStore(join(run_dir, "checkpoints"), 1)
    if which == "latest":
        pointer = store.latest()
        if pointer is None:
            raise UserError(
                f"--training False needs a checkpoint, and {run_dir} has none; "
                "train first (same command with --training True)"
            )
        return store, pointer
    if which == "best":
        best = CheckpointStore(join(run_dir, BEST_DIR), 1)
        pointer = best.latest()
        if pointer is None:
            raise UserError(
                f"--checkpoint best: {run_dir} has no best checkpoint (one is kept from the "
                "first evaluation on); train first, or use --checkpoint latest"
            )
        return best, pointer
    try:
        step = int(which)
    except ValueError:
        raise UserError(
            f"--checkpoint must be best, latest or an env step, got {which!r}"
        ) from None
    name = f"step_{step:012d}"
    if not tf.io.gfile.exists(join(store.directory, name, "tf.index")):
        listed = ", ".join(str(int(n[len("step_") :])) for n in store.step_names()) or "none"
        raise UserError(
            f"--checkpoint {step}: {run_dir} keeps no checkpoint at that env step (kept: "
            f"{listed}; keep_checkpoints decides how many), or use best or latest"
        )
    return store, {"step": step, "directory": name}


def best_evaluation(store: CheckpointStore) -> dict[str, Any] | None:
    """The evaluation that made the policy in `store` (a run's `checkpoints/best/`) the best."""
    pointer = store.latest()
    if pointer is None:
        return None
    return read_json(join(store.directory, pointer["directory"], "trainer.json"))["evaluation"]
