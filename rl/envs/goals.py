"""Goal-conditioned envs as hindsight replay sees them (docs/goal_conditioned.md).

A goal-conditioned env, in gymnasium-robotics' convention (`GoalEnv`), observes a Dict with an
`achieved_goal` and a `desired_goal` key beside the `observation`, and computes the reward of
any (achieved, desired) pair with `env.compute_reward(achieved_goal, desired_goal, info)`, batched
over leading axes. `memory=her` needs both: the goal keys' place in the packed observation
(`goal_slices`) and the reward function (`goal_reward_function`). `check_goal_env` refuses
anything else before a run writes a file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rl.envs.factory import make_env
from rl.envs.spec import EnvSpec
from rl.errors import UserError

GOAL_KEYS = ("achieved_goal", "desired_goal")
HOW_TO_FIX = "use a goal-conditioned env (e.g. FetchReach-v4, BitFlipping-v0) or memory=uniform"


def goal_slices(spec: EnvSpec) -> tuple[slice, slice]:
    """Where the achieved and the desired goal lie in the packed observation vector; UserError
    unless the env observes both, as vectors of one shape."""
    parts = {p.key: p for p in spec.obs_layout.parts} if spec.obs_layout else {}
    missing = [key for key in GOAL_KEYS if key not in parts]
    if missing:
        raise UserError(
            f"memory=her relabels goals, but env {spec.env_id!r} has no {' or '.join(missing)} "
            f"key in a Dict observation; {HOW_TO_FIX}"
        )
    achieved, desired = (parts[key] for key in GOAL_KEYS)
    if achieved.kind != "vector" or desired.kind != "vector" or achieved.shape != desired.shape:
        raise UserError(
            f"env {spec.env_id!r}: achieved_goal ({achieved.kind} {achieved.shape}) and "
            f"desired_goal ({desired.kind} {desired.shape}) must be vectors of one shape for "
            "memory=her to put one in place of the other"
        )
    return tuple(slice(p.offset, p.offset + p.size) for p in (achieved, desired))


def goal_reward_function(
    env_name: str, env_kwargs: dict[str, Any]
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The env's batched `compute_reward(achieved [N, G], desired [N, G]) -> [N]`, from one copy
    of the env that the function keeps. Each item gets an empty info (rl does not store infos)."""
    env = make_env(env_name, env_kwargs)
    compute_reward = getattr(env.unwrapped, "compute_reward", None)
    if compute_reward is None:
        env.close()
        raise UserError(
            f"memory=her recomputes rewards with the env's compute_reward(achieved_goal, "
            f"desired_goal, info), which env {env_name!r} does not have; {HOW_TO_FIX}"
        )

    def reward(achieved: np.ndarray, desired: np.ndarray) -> np.ndarray:
        infos = np.array([{} for _ in range(len(achieved))], dtype=object)
        return np.asarray(compute_reward(achieved, desired, infos), np.float32).reshape(-1)

    return reward


def check_goal_env(env_name: str, env_kwargs: dict[str, Any], spec: EnvSpec) -> None:
    """UserError, naming the fix, unless memory=her can relabel this env's goals."""
    goal_slices(spec)
    goal_reward_function(env_name, env_kwargs)
