"""Building a run's agent from hparams: the one place that seeds its initialization and picks
its class, so the in-process engine, the compiled path, the Ray learner and export build the same
agent from the same seed; and the acting role alone, for a Ray actor."""

from __future__ import annotations

import contextlib
from typing import Any

import tensorflow as tf

from rl.agents.base import Agent
from rl.envs.spec import EnvSpec
from rl.hparams import HParams
from rl.registry import get_agent
from rl.utils.seeding import derive_seed, seed_everything


def build_agent(
    hparams: HParams, spec: EnvSpec, seed: int, strategy: tf.distribute.Strategy | None = None,
    *worker_names: Any,
) -> Agent:  # fmt: skip
    """The run's agent, initialized from `seed`, built under `strategy`'s scope if given."""
    seed_everything(derive_seed(seed, "init"), hparams.deterministic)
    with strategy.scope() if strategy is not None else contextlib.nullcontext():
        return get_agent(hparams.agent)(spec, hparams, derive_seed(seed, "agent", *worker_names))


def build_actor(hparams: HParams, spec: EnvSpec, seed: int) -> Agent:
    """The acting role of the agent `build_agent` makes (rl/agents/base.py): its networks,
    exploration and what `observe` feeds, without a learner (no optimizer state, no replay
    table). Its weights are meant to be loaded from a learner's."""
    seed_everything(derive_seed(seed, "init"), hparams.deterministic)
    agent_class = get_agent(hparams.agent)
    return agent_class(spec, hparams, derive_seed(seed, "agent"), acting_only=True)
