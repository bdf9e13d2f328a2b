"""Builds gymnasium vector envs by name, with an explicit autoreset mode.

A name resolves, in order, to: an env registered in `rl.registry.envs` (our own factories), a
gymnasium id (`CartPole-v1`; Atari ids such as `ALE/Pong-v5` get rl/envs/atari.py's
preprocessing, MuJoCo ids such as `Hopper-v5` rl/envs/mujoco.py's wrappers), or a
`module.path:Name` where Name is a `gymnasium.Env` subclass or a gymnasium id that importing the
module registers. Every vector env uses `AutoresetMode.SAME_STEP`: the step that ends an episode
returns the reset observation and puts the true last one in `info["final_obs"]`, so a transition
never straddles two episodes.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable
from typing import Any

import gymnasium as gym
from gymnasium.vector import AutoresetMode

from rl import registry
from rl.envs.atari import atari_frame_stack, check_atari_kwargs, is_atari_id, make_atari
from rl.envs.mujoco import is_mujoco_id, make_mujoco
from rl.envs.packed_observation import ObsLayout, PackObservation, observation_layout
from rl.envs.spec import EnvSpec
from rl.errors import UserError, did_you_mean
from rl.hparams.compiled_path import runs_compiled

AUTORESET_MODE = AutoresetMode.SAME_STEP


# Keyword arguments `gym.make` takes itself besides the env constructor's.
GYM_MAKE_KWARGS = ("max_episode_steps", "disable_env_checker")


def _check_kwargs(
    name: str, constructor: Any, env_kwargs: dict[str, Any], extra: tuple[str, ...] = ()
) -> None:
    """UserError naming an env_kwargs key the env's constructor does not take (not a TypeError
    from inside gymnasium); constructors taking **kwargs or unreadable signatures take anything."""
    if not env_kwargs:
        return
    try:
        parameters = inspect.signature(constructor).parameters.values()
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    accepted = [p.name for p in parameters if p.kind in kinds] + list(extra)
    for key in env_kwargs:
        if key not in accepted:
            raise UserError(
                f"env {name!r} does not take env_kwargs key {key!r}"
                f"{did_you_mean(key, accepted)}; it takes: {', '.join(accepted) or 'nothing'}"
            )


def _gym_id_constructor(env_id: str) -> Any:
    """The callable a registered gymnasium id builds its env with (None if it cannot be loaded)."""
    entry_point = gym.spec(env_id).entry_point
    if callable(entry_point):
        return entry_point
    try:
        return gym.envs.registration.load_env_creator(entry_point)
    except Exception:  # a missing optional dependency: gym.make reports it when building
        return None


def _single_env_thunk(name: str, env_kwargs: dict[str, Any]) -> Callable[[], gym.Env]:
    """Returns a function that builds one env for `name`, or raises UserError."""
    if runs_compiled(name):
        raise UserError(
            f"env {name!r} is written in TF ops and runs on the compiled path, not as a "
            "gymnasium env (the compiled engine)"
        )
    if name in registry.envs:
        factory = registry.envs.get(name)
        return lambda: factory(**env_kwargs)
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise UserError(
                f"env {name!r}: cannot import module {module_name!r} ({e}); "
                "check the module path and that it is on PYTHONPATH"
            ) from None
        target = getattr(module, attr, None)
        if isinstance(target, type) and issubclass(target, gym.Env):
            _check_kwargs(name, target, env_kwargs)
            return lambda: target(**env_kwargs)
        if attr in gym.registry:
            _check_kwargs(name, _gym_id_constructor(attr), env_kwargs, GYM_MAKE_KWARGS)
            return lambda: gym.make(attr, **env_kwargs)
        raise UserError(
            f"env {name!r}: {module_name!r} has no gymnasium.Env subclass or registered id "
            f"named {attr!r}"
        )
    if is_atari_id(name):
        check_atari_kwargs(name, env_kwargs)
        return lambda: make_atari(name, **env_kwargs)
    if name in gym.registry:
        _check_kwargs(name, _gym_id_constructor(name), env_kwargs, GYM_MAKE_KWARGS)
        make = make_mujoco if is_mujoco_id(name) else gym.make
        return lambda: make(name, **env_kwargs)
    known = list(registry.envs.names()) + list(gym.registry.keys())
    raise UserError(
        f"unknown env {name!r}{did_you_mean(name, known)}; use a gymnasium id "
        "(e.g. CartPole-v1), a registered env (train.py --list) or module.path:EnvClass"
    )


def make_vector_env(
    name: str,
    num_envs: int,
    seed: int,
    env_kwargs: dict[str, Any] | None = None,
    max_episode_steps: int | None = None,
    reward_augmentation: Callable[[gym.Env], gym.Env] | None = None,
    num_workers: int = 1,
) -> tuple[gym.vector.VectorEnv, EnvSpec]:
    """A seeded, reset-ready vector env of `num_envs` copies and its EnvSpec. `reward_augmentation`
    wraps each copy outside the time limit, so it sees `terminated` and `truncated` apart;
    `num_workers` > 1 steps the copies in that many processes (rl/envs/grouped_env.py)."""
    _check_copies(num_envs, num_workers)
    env_kwargs = dict(env_kwargs or {})
    atari = is_atari_id(name)
    if atari and max_episode_steps is not None:
        # Atari: the limit caps the whole game, below episodic life (rl/envs/atari.py).
        env_kwargs["max_episode_steps"] = max_episode_steps
    thunk = _single_env_thunk(name, env_kwargs)

    def make_unpacked() -> gym.Env:
        env = thunk()
        if max_episode_steps is not None and not atari:
            env = gym.wrappers.TimeLimit(env, max_episode_steps=max_episode_steps)
        if reward_augmentation is not None:
            env = reward_augmentation(env)
        return env

    try:
        vec_env, layout, env_limit = _vectorize(name, make_unpacked, num_envs, num_workers, atari)
    except gym.error.Error as e:
        raise UserError(f"env {name!r} could not be created: {e}") from None
    limit = max_episode_steps or env_limit
    spec = EnvSpec.from_spaces(
        name, num_envs, vec_env.single_observation_space, vec_env.single_action_space, limit,
        layout,
    )  # fmt: skip
    if atari:
        spec = dataclasses.replace(
            spec, frame_stack=atari_frame_stack(env_kwargs), reports_game_score=True
        )
    vec_env.reset(seed=seed)
    vec_env.action_space.seed(seed)
    return vec_env, spec


def _check_copies(num_envs: int, num_workers: int) -> None:
    """At least one copy, split evenly over the worker processes."""
    if num_envs < 1:
        raise UserError(f"num_envs must be >= 1, got {num_envs}")
    if num_workers < 1 or num_envs % num_workers:
        raise UserError(
            f"num_envs={num_envs} env copies cannot be split evenly over {num_workers} worker "
            f"processes; use a num_envs that is a multiple of --num_workers"
        )


def _vectorize(
    name: str, make_unpacked: Callable[[], gym.Env], num_envs: int, num_workers: int, atari: bool
) -> tuple[gym.vector.VectorEnv, ObsLayout | None, int | None]:
    """`num_envs` copies from `make_unpacked` (in `num_workers` processes when > 1), packed where
    observations need it; with their layout and the copies' own time limit."""
    # The first copy tells whether observations need packing (a Dict, or info's mask).
    probe = make_unpacked()
    layout = None if atari else _layout_of(name, probe)

    def make_one() -> gym.Env:
        env = make_unpacked()
        return env if layout is None else PackObservation(env, layout)

    if num_workers > 1:
        from rl.envs.grouped_env import GroupedAsyncVectorEnv

        probe.close()
        vec_env = GroupedAsyncVectorEnv([make_one] * num_envs, num_workers)
        env_limit = vec_env.env_max_episode_steps
    else:
        first = probe if layout is None else PackObservation(probe, layout)
        vec_env = gym.vector.SyncVectorEnv(
            [lambda: first] + [make_one for _ in range(num_envs - 1)],
            autoreset_mode=AUTORESET_MODE,
        )
        env_limit = first.spec.max_episode_steps if first.spec else None
    return vec_env, layout, env_limit


def make_env(name: str, env_kwargs: dict[str, Any] | None = None) -> gym.Env:
    """One copy of env `name` as its constructor builds it: no time limit of ours, no packing."""
    return _single_env_thunk(name, dict(env_kwargs or {}))()


def check_env_name(name: str, env_kwargs: dict[str, Any] | None = None) -> None:
    """UserError if `name` resolves to no env, or its constructor refuses an `env_kwargs` key."""
    _single_env_thunk(name, dict(env_kwargs or {}))


def _layout_of(name: str, env: gym.Env) -> ObsLayout | None:
    """How `env`'s observations are packed (None: a plain Box). Discrete-action envs are reset
    once to read an `info["action_mask"]` (the vector env's seeded reset follows)."""
    layout = observation_layout(name, env.observation_space, env.action_space)  # spaces first
    if not isinstance(env.action_space, gym.spaces.Discrete):
        return layout
    _, info = env.reset()
    return observation_layout(name, env.observation_space, env.action_space, info)


def single_env_spec(name: str, env_kwargs: dict[str, Any] | None = None) -> EnvSpec:
    """The EnvSpec of one copy of env `name`, built and closed: what train.py checks an agent
    against before anything is written. UserError for an env rl cannot take."""
    env_kwargs = dict(env_kwargs or {})
    thunk = _single_env_thunk(name, env_kwargs)
    try:
        env = thunk()
    except gym.error.Error as e:
        raise UserError(f"env {name!r} could not be created: {e}") from None
    try:
        layout = None if is_atari_id(name) else _layout_of(name, env)
        space = env.observation_space if layout is None else layout.space
        limit = env.spec.max_episode_steps if env.spec else None
        return EnvSpec.from_spaces(name, 1, space, env.action_space, limit, layout)
    finally:
        env.close()
