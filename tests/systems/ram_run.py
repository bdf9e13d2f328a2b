"""Run by tests/systems/test_strategy_training.py: train.py's `main` with `--output_dir ram://...`
(TF's in-memory filesystem, which lives only as long as this process), then resume it with more
steps, then copy the ram:// tree to a local directory with tf.io.gfile only, so the test can
read what was written. Prints one JSON line: the exit statuses and the ram:// file list.

    python ram_run.py RAM_OUTPUT_DIR LOCAL_COPY_DIR HPARAMS_SET STEPS RESUME_STEPS
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import train  # noqa: E402


def main(ram_dir: str, local_dir: str, hparams_set: str, steps: str, resume_steps: str) -> None:
    flags = ["--hparams", hparams_set, "--output_dir", ram_dir]
    statuses = [
        train.main([*flags, "--train_steps", steps]),
        train.main([*flags, "--train_steps", resume_steps]),
    ]
    import tensorflow as tf

    files = []
    for root, _, names in tf.io.gfile.walk(ram_dir):
        for name in names:
            source = f"{root.rstrip('/')}/{name}"
            relative = source[len(ram_dir.rstrip("/")) + 1 :]
            files.append(relative)
            target = Path(local_dir) / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            with tf.io.gfile.GFile(source, "rb") as f:
                target.write_bytes(f.read())
    print("RESULT " + json.dumps({"statuses": statuses, "files": sorted(files)}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
