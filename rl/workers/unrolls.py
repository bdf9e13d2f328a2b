"""IMPALA unrolls between processes: the fields V-trace needs, taken from an actor's rollout
buffer, put into the learner's (Espeholt et al. 2018, https://arxiv.org/abs/1802.01561).
"""

from __future__ import annotations

import numpy as np

from rl.agents.impala import UNROLL_FIELDS, Impala
from rl.types import Batch


def pop_unroll(agent: Impala) -> Batch:
    """An actor's full unroll ([T, num_envs, ...] copies of `UNROLL_FIELDS`)."""
    rollout = agent.rollout
    if not rollout.full():
        raise RuntimeError(f"pop_unroll: {len(rollout)} of {agent.unroll_length} steps collected")
    data = rollout.data()
    unroll = {key: data[key].copy() for key in UNROLL_FIELDS}
    rollout.reset()
    return unroll


def add_unroll(agent: Impala, unroll: Batch) -> None:
    """Actors' unrolls, concatenated to [T, num_envs], for the next `agent.update()`."""
    state = agent.rollout.state_dict()
    state.update({key: np.asarray(unroll[key]) for key in UNROLL_FIELDS})
    state["t"] = np.array(agent.unroll_length, np.int64)
    agent.rollout.load_state_dict(state)  # checks every shape and dtype
