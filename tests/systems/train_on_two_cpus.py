"""Run by tests/systems/test_mirrored_train_end_to_end.py: `train.py`'s `main` with the given
flags in a process whose one CPU is split into 2 logical devices (configured before TensorFlow
initializes, hence a process of its own), so `--strategy mirrored` has 2 replicas. Afterwards
it prints one line `replicas N`: how many replicas the run's strategy had.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import train  # noqa: E402


def main(argv: list[str]) -> int:
    import tensorflow as tf

    import rl  # noqa: F401  (imports TensorFlow with stderr muted)

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    status = train.main(argv)
    from rl.distribute.strategies import shared_strategy

    print(f"replicas {shared_strategy('mirrored').num_replicas_in_sync}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
