"""`--num_workers` checks: every unsupported combination is a UserError before anything is
written; `uses_apex` and `uses_asynchronous_actors` say which engine runs Ray actors."""

from __future__ import annotations

import importlib.util
import math
import os

from rl import registry
from rl.agents.replay_agent import ReplayAgent
from rl.envs.atari import is_atari_id
from rl.errors import UserError
from rl.hparams import HParams
from rl.workers.exploration import check_exploration
from rl.workers.flags import WorkerFlags


def uses_apex(hparams: HParams) -> bool:
    """Replay agents (DQN, TD3/DDPG, SAC) train with Ape-X actors."""
    return issubclass(registry.get_agent(hparams.agent), ReplayAgent)


def uses_asynchronous_actors(hparams: HParams) -> bool:
    """Agents whose class sets `asynchronous_actors` (IMPALA; rl/engines/impala.py)."""
    return bool(getattr(registry.get_agent(hparams.agent), "asynchronous_actors", False))


def check_num_workers(args: WorkerFlags, hparams: HParams, compiled: bool, strategy: str) -> None:
    """Raises UserError for a --num_workers the run cannot use, naming the fix."""
    n = args.num_workers
    _check_worker_flag_values(args)
    actors = n > 1 and (uses_apex(hparams) or uses_asynchronous_actors(hparams))
    _check_ray_placement(args, hparams, actors)
    if n == 1 or not args.training:  # test episodes are played in this process
        return
    if compiled:
        raise UserError(
            f"--num_workers {n}: env {hparams.env!r} runs on the compiled path, where all env "
            "copies step inside one XLA program; raise num_envs instead and use --num_workers 1"
        )
    if actors and importlib.util.find_spec("ray") is None:
        raise UserError(
            f"--num_workers {n} trains {hparams.agent} with Ray actors, and Ray is not installed "
            "here; install rl with its `ray` extra (pip install -e '.[ray]') or run ./setup.sh"
        )
    if strategy != "default":
        raise UserError(
            f"--num_workers {n} with --strategy {strategy}: combining worker processes with a "
            "distribution strategy is not supported; use one of the two"
        )
    check_exploration(hparams)
    apex = uses_apex(hparams)
    if not apex and hparams.num_envs % n:
        raise UserError(
            f"--num_workers {n} splits the num_envs={hparams.num_envs} training env copies "
            f"over {n} processes; use a num_envs that is a multiple of {n} "
            f'(e.g. --hparam_override "num_envs={n * max(1, hparams.num_envs // n)}")'
        )
    kind = "Ape-X" if apex else "IMPALA actors" if uses_asynchronous_actors(hparams) else None
    if args.record_video and kind:
        raise UserError(
            f"--record_video with --num_workers {n} ({kind}) is not supported yet; train, then "
            "film the agent with --training False --record_video True"
        )
    if apex and is_atari_id(hparams.env):
        raise UserError(
            f"--num_workers {n} (Ape-X) with Atari env {hparams.env!r} is not supported yet: "
            "its frame replay takes raw frames per env stream, not actors' n-step transitions; "
            "use --num_workers 1"
        )


def _check_worker_flag_values(args: WorkerFlags) -> None:
    """The worker flags' own ranges, whatever the run."""
    if args.num_workers < 1:
        raise UserError(f"--num_workers must be >= 1, got {args.num_workers}")
    if args.max_actor_restarts < 0:
        raise UserError(f"--max_actor_restarts must be >= 0, got {args.max_actor_restarts}")
    if not math.isfinite(args.actor_wait_timeout) or args.actor_wait_timeout < 0:
        raise UserError(
            f"--actor_wait_timeout must be a number of seconds >= 0 (0: wait without end), "
            f"got {args.actor_wait_timeout:g}"
        )


def _check_ray_placement(args: WorkerFlags, hparams: HParams, actors: bool) -> None:
    """The flags that place Ray actors need a run with actors, and a cluster to place them on."""
    ray_flags = [f for f in ("ray_address", "actor_resources") if getattr(args, f) is not None]
    if ray_flags and args.training and not actors:
        raise UserError(
            f"--{ray_flags[0]} places Ray actors, which train replay agents and IMPALA with "
            f"--num_workers N > 1; not {hparams.agent} with --num_workers {args.num_workers}"
        )
    if args.actor_resources and not (args.ray_address or os.environ.get("RAY_ADDRESS")):
        raise UserError(
            "--actor_resources places actors on the nodes of a Ray cluster that declare those "
            "resources; give the cluster with --ray_address (or RAY_ADDRESS)"
        )
