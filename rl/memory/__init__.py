"""Replay memories and transition builders; importing this package registers the replays by name
("uniform", "prioritized"), built with `get_memory(name)(capacity=..., fields=..., seed=...)`.
"""

from rl.memory.n_step import NStepAccumulator
from rl.memory.prioritized import PrioritizedReplay
from rl.memory.ring_storage import FieldSpec, RingStorage
from rl.memory.rollout_buffer import RolloutBuffer
from rl.memory.sum_tree import SumTree
from rl.memory.uniform import Replay, UniformReplay

__all__ = [
    "FieldSpec",
    "NStepAccumulator",
    "PrioritizedReplay",
    "Replay",
    "RingStorage",
    "RolloutBuffer",
    "SumTree",
    "UniformReplay",
]
