"""The engine protocol: what the one training loop (`rl.loop`) asks of whatever trains the runs.

The loop owns the cadence and every run file; an engine owns how env steps turn into updates
(in-process, compiled, Ape-X, IMPALA; `rl.training` picks one), for a list of runs in lockstep.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

from rl.evaluation import EvalResult, evaluate, make_eval_env
from rl.utils.logger import Sink
from rl.utils.seeding import derive_seed


@dataclass
class Iteration:
    """What one run did in one iteration: env steps after it, the episodes that ended (returns
    in the env's own rewards), metrics to log ("debug/" keys go to TensorBoard at once)."""

    env_steps: int
    metrics: dict[str, float] = field(default_factory=dict)
    episodes: int = 0
    episode_return_sum: float = 0.0
    episode_length_sum: float = 0.0

    @classmethod
    def from_episodes(
        cls,
        env_steps: int,
        metrics: dict[str, float],
        returns: Sequence[float],
        lengths: Sequence[float],
    ) -> Iteration:
        return cls(env_steps, metrics, len(returns), float(np.sum(returns)), float(np.sum(lengths)))


@dataclass(frozen=True)
class EvalRequest:
    """One evaluation the loop wants: run `index`, its `number`-th, at `env_steps`, `seed`."""

    index: int
    seed: int
    number: int
    env_steps: int


@dataclass
class CheckpointParts:
    """What a run's checkpoint holds: TF state, and numpy state outside TF variables."""

    checkpoint: tf.train.Checkpoint
    numpy_state: dict[str, np.ndarray] = field(default_factory=dict)


class Engine:
    """Trains runs in lockstep; subclasses implement the first five methods."""

    # Loop-state keys this engine adds (with their initial values), saved in trainer.json.
    extra_state: dict[str, Any] = {}
    # Whether SIGTERM may abandon an evaluation midway (not where workers must stay in step).
    evaluation_interruptible: bool = True

    def checkpoint_parts(self, index: int) -> CheckpointParts:
        """Restore targets before `start`; afterwards the state to save."""
        raise NotImplementedError

    def policy_checkpoint(self, index: int) -> tf.train.Checkpoint:
        """The weights test mode restores; taking them must not change training."""
        raise NotImplementedError

    def start(self, states: Sequence[dict[str, Any]]) -> None:
        """After every run was restored (or not)."""
        raise NotImplementedError

    def iterate(self, active: Sequence[bool]) -> list[Iteration]:
        """One iteration of every run (inactive ones may be stepped too, their result ignored)."""
        raise NotImplementedError

    def evaluate(self, requests: Sequence[EvalRequest]) -> list[EvalResult]:
        raise NotImplementedError

    def log_metrics(self, index: int) -> dict[str, float]:
        """Scalars logged at each log point besides the iteration's (agent state, workers)."""
        return {}

    def load_numpy_state(self, index: int, state: dict[str, np.ndarray]) -> None:
        """Restores run `index`'s numpy state (replay, ...)."""

    def prepare_checkpoint(self, index: int, state: dict[str, Any]) -> None:
        """Right before run `index` is saved (e.g. cut its episodes: `state["cuts"]`)."""

    def prepare_off_schedule_checkpoint(self, index: int, state: dict[str, Any]) -> None:
        """Right before run `index` is saved off `checkpoint_every`'s schedule (SIGTERM, the last
        step, an early stop). An engine that can should save its running episodes instead of
        cutting them: a cut that an uninterrupted run never made would make a run resumed from
        here differ from it."""
        self.prepare_checkpoint(index, state)

    def checkpoint_written(self, index: int, state: dict[str, Any]) -> None:
        """Right after run `index` was saved (e.g. restart its envs)."""

    def progress_sink(self, path: str, resume_at_step: int) -> Sink | None:
        """A progress.csv sink of its own (None: the loop's standard one)."""
        return None

    def manifest_extras(self) -> dict[str, Any]:
        """Keys this engine adds to manifest.json."""
        return {}

    def resume_note(self, index: int) -> str:
        """Said after "resuming from checkpoint at N env steps" (what was restored)."""
        return ""

    def agree_to_stop(self, requested: bool) -> bool:
        """Whether to stop now on this process's SIGTERM flag (multi-worker engines vote)."""
        return requested

    def nonfinite_parameter(self, index: int) -> str | None:
        """The name of a parameter of run `index` holding NaN or Inf, or None."""
        return None

    def close(self) -> None:
        """Releases envs, processes and threads."""


class OneAgentEngine(Engine):
    """One run whose whole state is `self.agent`, checkpointed as `self.checkpoint`."""

    agent: Any
    checkpoint: tf.train.Checkpoint

    def open_eval_env(self) -> None:
        """The evaluation env (`eval.episodes` copies), seeded from the run's seed."""
        seed = derive_seed(self.seed, "eval_env")
        self.eval_env, spec = make_eval_env(self.hp, self.hp.eval.episodes, seed)
        self.full_games = spec.reports_game_score

    def evaluate_agent(self, seed: int) -> EvalResult:
        """One evaluation of the agent under the run's protocol (`eval.*`)."""
        protocol = self.hp.eval
        return evaluate(
            self.agent, self.eval_env, seed, protocol.epsilon, self.full_games, protocol.step_budget
        )

    def checkpoint_parts(self, index: int) -> CheckpointParts:
        return CheckpointParts(self.checkpoint, self.agent.numpy_state())

    def policy_checkpoint(self, index: int) -> tf.train.Checkpoint:
        return self.checkpoint

    def load_numpy_state(self, index: int, state: dict[str, np.ndarray]) -> None:
        self.agent.load_numpy_state(state)

    def log_metrics(self, index: int) -> dict[str, float]:
        return self.agent.metrics()

    def nonfinite_parameter(self, index: int) -> str | None:
        return first_nonfinite(self.agent.learner_variables())


def first_nonfinite(variables: Sequence[tf.Variable]) -> str | None:
    """The name of the first variable holding NaN or Inf, or None (one check per checkpoint)."""
    finite = [bool(tf.reduce_all(tf.math.is_finite(v))) for v in variables]
    bad = [v.name for v, ok in zip(variables, finite, strict=True) if not ok]
    return bad[0] if bad else None
