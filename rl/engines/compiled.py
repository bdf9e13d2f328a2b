"""The compiled engine: TF-ops envs ("tf/CartPole-v1", `rl.envs.tf`), one XLA program per
iteration (T steps x N envs + the update; `rl.compiled.programs`) for all the runs it trains.

Iterations are whole (a partial last rollout would retrace), so a run ends at the first
multiple of T * N >= train_steps. Checkpoints hold the envs' state, so saving cuts no episode and
resume is exact. `--copies N` trains N seeds as one program where the agent has a multi-seed path.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import Any

import tensorflow as tf

from rl.compiled.population import POPULATION_KEYS, varying_keys
from rl.compiled.ppo_seeds_iteration import CompiledPPOSeeds
from rl.compiled.programs import SeedGroup, build_group, multi_seed_class, single_seed_class
from rl.compiled.shard_threads import ShardedSeeds, shard_count
from rl.compiled.stacked_variables import NotStackable
from rl.engines.base import CheckpointParts, Engine, EvalRequest, Iteration, first_nonfinite
from rl.envs.tf import TFEnv, make_tf_env
from rl.errors import UserError
from rl.evaluation import EvalResult
from rl.hparams import HParams
from rl.utils.seeding import derive_seed

# Iteration outputs that are episode counts, not train/<name> metrics.
EPISODE_KEYS = ("episodes_done", "episode_return_sum", "episode_length_sum")


def make_env(hparams: HParams) -> TFEnv:
    return make_tf_env(
        hparams.env, max_episode_steps=hparams.max_episode_steps, **hparams.env_kwargs
    )


def check_compiled(hparams: HParams, record_video: bool, render: bool) -> None:
    """UserError, before anything is written, for what the compiled path cannot do."""
    if record_video or render:
        raise UserError(
            f"env {hparams.env!r} is written in TF ops and cannot render; "
            "--record_video/--render need a gymnasium env"
        )
    keys = ("normalize_obs", "normalize_reward")
    normalized = [key for key in keys if key in hparams and getattr(hparams, key)]
    if normalized:
        raise UserError(
            f"{' and '.join(normalized)} work on gymnasium envs only (the compiled program "
            f"keeps no running statistics); set them False for {hparams.env!r}"
        )
    single_seed_class(hparams)  # an agent without a compiled path fails here


def group_runs(hparams: HParams, runs: list) -> list[list]:
    """Unfinished runs resuming at the same env step train together: as ONE program, or one per
    shard."""
    by_step: dict[int, list] = {}
    for run in (run for run in runs if not run.already_complete):
        by_step.setdefault(run.state["env_steps"], []).append(run)
    if multi_seed_class(hparams) is not None:
        return [group for _, group in sorted(by_step.items())]
    groups = []
    for _, group in sorted(by_step.items()):
        at_once = shard_count(hparams, len(group))
        groups += [group[start : start + at_once] for start in range(0, len(group), at_once)]
    return groups


class ProgramCache:
    """A tuner's population programs (`rl.tune --population`): a later batch with the same
    hparams, seeds and varying keys reuses the first batch's (no build, trace or compile), each
    member restored to its fresh build (which depends only on its seed) with its own values."""

    def __init__(self) -> None:
        self._scratch = tempfile.TemporaryDirectory(prefix="rl_programs_")
        # key -> (program, its members' checkpoints as one, where their initial state is)
        self.programs: dict[tuple, tuple[CompiledPPOSeeds, tf.train.Checkpoint, str]] = {}

    def group(
        self, hparams: HParams, env: TFEnv, seeds: list[int], members: list[HParams]
    ) -> SeedGroup:
        """The cached program of this structure, re-initialised for `members`, or a new one."""
        varying = varying_keys(members)
        shared = [str(getattr(members[0], key)) for key in POPULATION_KEYS if key not in varying]
        key = (hparams.to_json(), tuple(seeds), tuple(sorted(varying)), tuple(shared))
        if key in self.programs:
            group, initial, path = self.programs[key]
            initial.read(path).assert_consumed()
            group.use_members(members)
            return group
        group = build_group(hparams, env, seeds, members)
        if isinstance(group, CompiledPPOSeeds):
            initial = tf.train.Checkpoint(members=[member.checkpoint for member in group.members])
            path = initial.write(os.path.join(self._scratch.name, str(len(self.programs))))
            self.programs[key] = (group, initial, path)
        return group


class CompiledEngine(Engine):
    """The runs' seeds as one seed group (`rl.compiled.programs.SeedGroup`)."""

    def __init__(
        self, hparams: HParams, runs: Sequence, programs: ProgramCache | None = None
    ) -> None:
        self.hp = hparams
        env = make_env(hparams)
        seeds = [run.seed for run in runs]
        members = [run.hp for run in runs]  # a population's members differ (rl.compiled.population)
        try:
            if programs is None:
                self.group = build_group(hparams, env, seeds, members)
            else:
                self.group = programs.group(hparams, env, seeds, members)
        except NotStackable:
            # Raised while building, before anything was written: one program per seed.
            self.group = ShardedSeeds(
                [build_group(m, env, [seed]) for m, seed in zip(members, seeds, strict=True)]
            )
        self.members = self.group.members
        self._members_current = False  # whether the members' agents hold the stack's values

    def checkpoint_parts(self, index: int) -> CheckpointParts:
        return CheckpointParts(self.members[index].checkpoint)

    def policy_checkpoint(self, index: int) -> tf.train.Checkpoint:
        self._store_members()
        return self.members[index].checkpoint

    def _store_members(self) -> None:
        """The stacked weights into every member's agent once per iteration (not once per run:
        `--copies N` would take a time that grows with N squared)."""
        if not self._members_current:
            self.group.store_to_members()
            self._members_current = True

    def start(self, states: Sequence[dict[str, Any]]) -> None:
        self.group.load_from_members()
        self._members_current = True  # the stack was just read from them

    def iterate(self, active: Sequence[bool]) -> list[Iteration]:
        self._members_current = False
        outs = self.group.run_iteration()
        steps = int(self.members[0].agent.env_steps.numpy())
        iterations = []
        for out in outs:
            episodes, return_sum, length_sum = (out.pop(key) for key in EPISODE_KEYS)
            learned = out.pop("learned", 1.0)  # an off-policy iteration before learning starts
            metrics = {f"train/{name}": value for name, value in out.items()} if learned else {}
            iterations.append(Iteration(steps, metrics, int(episodes), return_sum, length_sum))
        return iterations

    def evaluate(self, requests: Sequence[EvalRequest]) -> list[EvalResult]:
        """One compiled greedy evaluation of every seed (the program plays them all)."""
        by_index = {request.index: request for request in requests}
        seeds = [
            by_index[i].seed if i in by_index else derive_seed(member.seed, "eval", 0)
            for i, member in enumerate(self.members)
        ]
        results = self.group.evaluate(seeds, self.hp.eval.episodes)
        return [EvalResult(*results[request.index]) for request in requests]

    def prepare_checkpoint(self, index: int, state: dict[str, Any]) -> None:
        # No episode cut: the envs' state is in the checkpoint (see the module docstring).
        self._store_members()

    def log_metrics(self, index: int) -> dict[str, float]:
        return self.members[index].agent.metrics()

    def nonfinite_parameter(self, index: int) -> str | None:
        # Called after `prepare_checkpoint`: the members hold the stacked weights.
        return first_nonfinite(self.members[index].agent.learner_variables())

    def close(self) -> None:
        if isinstance(self.group, ShardedSeeds):
            self.group.close()


def play_test(
    hparams: HParams, seed: int, checkpoint: tuple, test_seed: int, episodes: int
) -> tuple[EvalResult, int]:
    """Test mode on a TF-ops env: greedy episodes of `checkpoint` (store, pointer), in-graph."""
    run = single_seed_class(hparams)(hparams, make_env(hparams), seed)
    store, pointer = checkpoint
    store.restore(run.checkpoint, pointer)
    returns, lengths = run.evaluate(test_seed, episodes)
    return EvalResult(returns=returns, lengths=lengths), pointer["step"]
