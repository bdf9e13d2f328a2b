"""Which compiled program trains which agent: a small table, and the seed-group adapter. An agent
gets the first entry whose base class it derives from, so a new on-policy agent needs no entry;
without a MULTI entry its `--copies` train one after another.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from rl.agents.dqn import DQN
from rl.agents.on_policy import OnPolicyAgent
from rl.compiled.base import CompiledRun
from rl.compiled.dqn_iteration import CompiledDQN
from rl.compiled.ppo_iteration import CompiledPPO
from rl.compiled.ppo_seeds_iteration import CompiledPPOSeeds
from rl.compiled.shard_threads import ShardedSeeds, shard_count, split_evenly
from rl.envs.tf import TFEnv
from rl.errors import UserError
from rl.hparams import HParams
from rl.registry import get_agent

SINGLE: tuple[tuple[type, type[CompiledRun]], ...] = (
    (OnPolicyAgent, CompiledPPO),
    (DQN, CompiledDQN),
)
MULTI: tuple[tuple[type, type], ...] = ((OnPolicyAgent, CompiledPPOSeeds),)


def single_seed_class(hparams: HParams) -> type[CompiledRun]:
    """The single-seed compiled run for `hparams.agent`; UserError when there is none."""
    agent_class = get_agent(hparams.agent)
    for base, compiled in SINGLE:
        if issubclass(agent_class, base):
            return compiled
    names = ", ".join(sorted({base.__name__ for base, _ in SINGLE}))
    raise UserError(
        f"agent {hparams.agent!r} has no compiled path for TF-ops envs ({hparams.env!r}); "
        f"agents derived from {names} have one (ppo, a2c, reinforce, dqn), or use a "
        "gymnasium env"
    )


def multi_seed_class(hparams: HParams) -> type | None:
    """The many-seeds-in-one-program class for `hparams.agent`, or None."""
    agent_class = get_agent(hparams.agent)
    for base, compiled in MULTI:
        if issubclass(agent_class, base):
            return compiled
    return None


class SeedGroup(Protocol):
    """What the compiled engine drives: S seeds trained in lockstep (S = 1 for a single run)."""

    members: list[CompiledRun]  # per seed: agent, env variables, checkpoint
    steps_per_iteration: int  # env steps per seed per iteration

    def run_iteration(self) -> list[dict[str, float]]: ...

    def evaluate(self, seeds: list[int], num_envs: int) -> list[tuple[np.ndarray, np.ndarray]]: ...

    def store_to_members(self) -> None: ...

    def load_from_members(self) -> None: ...


class OneSeed:
    """A single-seed `CompiledRun` as a `SeedGroup` of one."""

    def __init__(self, run: CompiledRun) -> None:
        self.members = [run]
        self.steps_per_iteration = run.steps_per_iteration

    def run_iteration(self) -> list[dict[str, float]]:
        return [self.members[0].run_iteration()]

    def evaluate(self, seeds: list[int], num_envs: int) -> list[tuple[np.ndarray, np.ndarray]]:
        return [self.members[0].evaluate(seeds[0], num_envs)]

    def store_to_members(self) -> None:
        pass  # the run's variables are its checkpoint

    def load_from_members(self) -> None:
        pass


def build_group(
    hparams: HParams,
    env: TFEnv,
    seeds: list[int],
    member_hparams: Sequence[HParams] | None = None,
) -> SeedGroup:
    """The seeds as `shard_count` concurrent programs, each a multi-seed program where the agent has
    one, else a single seed; `member_hparams`: each seed's own hparams (a population)."""
    members = list(member_hparams or [hparams] * len(seeds))
    shards = shard_count(hparams, len(seeds))
    if shards > 1:
        return ShardedSeeds(
            [
                _one_program(hparams, env, part, member_part)
                for part, member_part in zip(
                    split_evenly(seeds, shards), split_evenly(members, shards), strict=True
                )
            ]
        )
    return _one_program(hparams, env, seeds, members)


def _one_program(
    hparams: HParams, env: TFEnv, seeds: list[int], members: list[HParams]
) -> SeedGroup:
    if len(seeds) > 1:
        multi = multi_seed_class(hparams)
        if multi is None:
            raise ValueError(f"agent {hparams.agent!r} trains its seeds one program each")
        return multi(hparams, env, seeds, members)
    return OneSeed(single_seed_class(hparams)(members[0], env, seeds[0]))
