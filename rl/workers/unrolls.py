"""IMPALA unrolls between processes: taken from an actor's rollout buffer, put into the learner's
(Espeholt et al. 2018, https://arxiv.org/abs/1802.01561, section 3).

`pop_unroll` copies the fields V-trace needs out of an actor's rollout buffer and starts it
afresh (its episodes go on in the next unroll); the learner concatenates N actors' unrolls along
the env axis and `add_unroll` loads them into its own buffer for the next `update`.
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
    """The learner's batch from actors' unrolls (concatenated along the env axis to the agent's
    [T, num_envs]); the next `agent.update()` learns from it."""
    state = agent.rollout.state_dict()
    state.update({key: np.asarray(unroll[key]) for key in UNROLL_FIELDS})
    state["t"] = np.array(agent.unroll_length, np.int64)
    agent.rollout.load_state_dict(state)  # checks every shape and dtype
