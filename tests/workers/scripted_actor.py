"""Test-only Ray actor with `RemoteActor`'s constructor and `collect` signature that imports
neither TensorFlow nor `rl`, so that tests/workers/test_actor_group.py exercises the learner's
side (rl/workers/actor_group.py) in seconds. Its "hparams" say how each actor fails
({"<index>": script}): `raise_on_call` k raises on the k-th call of its first process,
`exit_on_call` k ends that process there (a restarted one never fails). Imported by Ray's workers as
`tests.workers.scripted_actor` (the repository root is on their path)."""

from __future__ import annotations

import json
import os


class ScriptedActor:
    def __init__(self, index: int, num_actors: int, hparams_json: str, seeds) -> None:
        self.index, self.script = index, json.loads(hparams_json)[str(index)]
        self.calls, self.weights, self.fetches = 0, None, 0

    def collect(self, weights: list, version: int, learner_steps: int) -> dict:
        import ray

        self.calls += 1
        first_process = not ray.get_runtime_context().was_current_actor_reconstructed
        if first_process and self.calls == self.script.get("raise_on_call"):
            raise ValueError(f"scripted failure of actor {self.index}")
        if first_process and self.calls == self.script.get("exit_on_call"):
            os._exit(1)
        if version != getattr(self, "version", None):
            (arrays,) = weights
            self.by_reference = isinstance(arrays, ray.ObjectRef)
            self.weights = ray.get(arrays) if self.by_reference else arrays
            self.version = version
            self.fetches += 1
        return {
            "worker": self.index,
            "restarted": first_process is False,
            "weights": self.weights,
            "version": version,
            "learner_steps": learner_steps,
            "fetches": self.fetches,
            "by_reference": self.by_reference,
            "pid": os.getpid(),
            "node_id": ray.get_runtime_context().get_node_id(),
        }
