"""Run by tests/systems/test_strategy_training.py, once per worker of a MultiWorkerMirroredStrategy
cluster on 127.0.0.1 (TF_CONFIG in the environment): `train.py`'s `main` with the given flags,
then the agent's final state written to $RL_TEST_DUMP (.npz).

A non-chief worker's files are removed when it finishes (by design), so this dump is how the test
sees that worker's weights; it also holds each worker's replay contents, to show that the
workers learned from different data.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import train  # noqa: E402


def main(argv: list[str]) -> int:
    import numpy as np
    import tensorflow as tf

    import rl  # noqa: F401  (imports TensorFlow with stderr muted)
    from rl.engines import in_process

    agents = []
    build_agent = in_process.build_agent

    def recording_build_agent(*args, **kwargs):
        agent = build_agent(*args, **kwargs)
        agents.append(agent)
        return agent

    in_process.build_agent = recording_build_agent
    status = train.main(argv)
    if status != 0 or not agents:
        return status or 1
    agent = agents[-1]
    arrays = {f"replay/{k}": v for k, v in agent.numpy_state().items()}
    with tempfile.TemporaryDirectory() as tmp:
        path = tf.train.Checkpoint(agent=agent).write(os.path.join(tmp, "final"))
        reader = tf.train.load_checkpoint(path)
        for key in reader.get_variable_to_shape_map():
            if key != "_CHECKPOINTABLE_OBJECT_GRAPH":
                arrays[f"tf/{key}"] = reader.get_tensor(key)
    np.savez(os.environ["RL_TEST_DUMP"], **arrays)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
