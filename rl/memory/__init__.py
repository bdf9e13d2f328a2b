"""Replay memories and transition builders; importing this package registers the replays by name
("uniform", "prioritized", "her"), built with `get_memory(name)(capacity=..., fields=..., seed=...)`
(hindsight replay takes the env's goal slices and reward function instead of `fields`).
"""

from rl.memory.hindsight import HindsightReplay
from rl.memory.n_step import NStepAccumulator
from rl.memory.prioritized import PrioritizedReplay
from rl.memory.ring_storage import FieldSpec, RingStorage
from rl.memory.rollout_buffer import RolloutBuffer
from rl.memory.sum_tree import SumTree
from rl.memory.uniform import Replay, UniformReplay

__all__ = [
    "FieldSpec",
    "HindsightReplay",
    "NStepAccumulator",
    "PrioritizedReplay",
    "Replay",
    "RingStorage",
    "RolloutBuffer",
    "SumTree",
    "UniformReplay",
]
