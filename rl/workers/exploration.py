"""Per-actor exploration for Ape-X, and the hparams an actor builds its agent copy from.

Ape-X (Horgan et al. 2018, https://arxiv.org/abs/1803.00933, section 4.1) gives actor i of N a
fixed epsilon (`workers.exploration = "apex"`, 0.4 down to 0.4^8; uniformly random before
`learning_starts`), so some actors explore hard while others play nearly greedily and no schedule
needs tuning. "agent" keeps the agent's own schedule at the learner's env step count; agents
without an epsilon always keep their own.
"""

from __future__ import annotations

from rl.errors import UserError
from rl.hparams import HParams

EXPLORATION_MODES = ("apex", "agent")


def apex_epsilon(index: int, num_actors: int, base: float = 0.4, alpha: float = 7.0) -> float:
    """epsilon_i = base^(1 + alpha * i / (N - 1)); a single actor gets `base`."""
    if not 0 <= index < num_actors:
        raise ValueError(f"actor index {index} is outside 0..{num_actors - 1}")
    if num_actors == 1:
        return base
    return base ** (1.0 + alpha * index / (num_actors - 1))


def actor_epsilon(hparams: HParams, index: int, num_actors: int) -> float | None:
    """Actor `index`'s fixed Ape-X epsilon, or None when it follows the agent's exploration."""
    workers = hparams.workers
    if workers.exploration != "apex" or "epsilon" not in hparams:
        return None
    return apex_epsilon(index, num_actors, workers.apex_epsilon, workers.apex_alpha)


def actor_hparams(hparams: HParams, index: int, num_actors: int) -> HParams:
    """The learner's hparams with the actor's own epsilon (if any)."""
    hp = hparams.copy()
    epsilon = actor_epsilon(hparams, index, num_actors)
    if epsilon is not None:
        hp.epsilon = epsilon
    return hp.freeze()


def check_exploration(hparams: HParams) -> None:
    """UserErrors for `workers` values out of range (raised before anything is written)."""
    workers = hparams.workers
    if workers.exploration not in EXPLORATION_MODES:
        raise UserError(
            f"workers.exploration must be one of {', '.join(EXPLORATION_MODES)}, "
            f"got {workers.exploration!r}"
        )
    if not 0.0 < workers.apex_epsilon <= 1.0 or workers.apex_alpha < 0:
        raise UserError(
            "workers.apex_epsilon must be in (0, 1] and workers.apex_alpha >= 0, got "
            f"{workers.apex_epsilon} and {workers.apex_alpha}"
        )
    for key in ("policy_refresh_every", "block_steps", "queue_blocks"):
        if getattr(workers, key) < 1:
            raise UserError(f"workers.{key} must be >= 1, got {getattr(workers, key)}")
