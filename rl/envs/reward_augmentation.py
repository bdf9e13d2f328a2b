"""Reward augmentations: registered gymnasium wrappers that change the reward the agent learns
from, on the training envs only.

A set picks one by name (`reward_augmentation`, with `reward_augmentation_kwargs`). Evaluation
and `--training False` build their envs without it, and `KeepTrueReward` keeps the env's reward
in `info["true_reward"]`, so every reported return is the environment's own reward.

Potential-based shaping adds F(s, s') = gamma * phi(s') - phi(s), which leaves the optimal policy
unchanged (Ng, Harada & Russell 1999, "Policy invariance under reward transformations", ICML)
when gamma is the agent's discount and phi of a terminal state is 0 (Grzes 2017, "Reward shaping
in episodic reinforcement learning", AAMAS). A truncated episode keeps phi(s'), because the
agents bootstrap through truncation as if the episode went on.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from rl import registry
from rl.errors import UserError
from rl.hparams.compiled_path import runs_compiled
from rl.registry import register_reward_augmentation

TRUE_REWARD = "true_reward"


class KeepTrueReward(gym.Wrapper):
    """Copies the env's own reward into `info["true_reward"]` (wrapped below augmentations)."""

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, TRUE_REWARD: float(reward)}


class PotentialShaping(gym.Wrapper):
    """Adds gamma * phi(s') - phi(s) to the reward, with phi(terminal) = 0 (module docstring);
    subclasses define `potential(obs)`, evaluated once per step (the current one is cached)."""

    def __init__(self, env: gym.Env, gamma: float) -> None:
        super().__init__(env)
        if not 0.0 <= gamma <= 1.0:
            raise UserError(f"potential shaping needs 0 <= gamma <= 1, got {gamma}")
        self.gamma = gamma
        self._phi = 0.0

    def potential(self, obs: np.ndarray) -> float:
        raise NotImplementedError

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._phi = self.potential(obs)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        next_phi = 0.0 if terminated else self.potential(obs)
        shaped = float(reward) + self.gamma * next_phi - self._phi
        self._phi = next_phi
        return obs, shaped, terminated, truncated, info


class MountainCarEnergyShaping(PotentialShaping):
    """MountainCar-v0 shaping with phi = scale * mechanical energy / (gravity / 3).

    The dynamics are v' = v + (a - 1) * force - gravity * cos(3x), so the height term that
    gravity derives from is (gravity / 3) * sin(3x) and the energy per unit mass is
    E = v^2 / 2 + (gravity / 3) * sin(3x). Dividing by gravity / 3 makes the height term range
    over [-1, 1] (v^2 / 2 then ranges over [0, 2.94] at the speed limit 0.07): phi rises as the
    car swings higher or faster, which is what reaching the flag takes.
    """

    GRAVITY = 0.0025  # gymnasium's MountainCarEnv.gravity

    def __init__(self, env: gym.Env, gamma: float, scale: float = 10.0) -> None:
        super().__init__(env, gamma)
        self.scale = float(scale)

    def potential(self, obs: np.ndarray) -> float:
        position, velocity = float(obs[0]), float(obs[1])
        unit = self.GRAVITY / 3.0
        energy = 0.5 * velocity**2 + unit * np.sin(3.0 * position)
        return self.scale * energy / unit


register_reward_augmentation("mountain_car_energy", MountainCarEnergyShaping)


@register_reward_augmentation("scale_reward")
def scale_reward(env: gym.Env, scale: float) -> gym.Env:
    """Multiplies every reward by `scale` (gymnasium's TransformReward)."""
    return gym.wrappers.TransformReward(env, lambda reward: scale * reward)


@register_reward_augmentation("clip_reward")
def clip_reward(env: gym.Env, min_reward: float = -1.0, max_reward: float = 1.0) -> gym.Env:
    """Clips every reward into [min_reward, max_reward] (gymnasium's ClipReward; DQN on Atari
    clips to [-1, 1], Mnih et al. 2015)."""
    return gym.wrappers.ClipReward(env, min_reward, max_reward)


# ------------------------------------------------------------------- from hparams to wrapper
def _options(factory: Callable[..., gym.Env], kwargs: dict[str, Any], gamma: float) -> dict:
    """The keyword arguments to call `factory(env, **options)` with: the user's kwargs, plus the
    agent's gamma where the augmentation takes one (shaping must use the agent's discount)."""
    accepted = inspect.signature(factory).parameters
    options = dict(kwargs)
    if "gamma" in accepted:
        if "gamma" in options:
            raise UserError(
                "reward_augmentation_kwargs must not set gamma: shaping uses the agent's gamma "
                "(set the gamma hparam instead)"
            )
        options["gamma"] = gamma
    return options


def check_reward_augmentation(hparams: Any) -> None:
    """Raises UserError for an unknown augmentation name or kwargs it does not take (builds
    nothing), so train.py can reject a bad set before anything is written."""
    name = hparams.reward_augmentation
    if name is None:
        if hparams.reward_augmentation_kwargs:
            raise UserError(
                "reward_augmentation_kwargs is set but reward_augmentation is None; name an "
                f"augmentation ({', '.join(registry.reward_augmentations.names())})"
            )
        return
    factory = registry.get_reward_augmentation(name)
    if runs_compiled(hparams.env):
        raise UserError(
            f"reward_augmentation {name!r} wraps gymnasium envs; the TF-ops env "
            f"{hparams.env!r} runs on the compiled path, which has no reward augmentation"
        )
    options = _options(factory, hparams.reward_augmentation_kwargs, hparams.gamma)
    signature = inspect.signature(factory)
    try:
        signature.bind(None, **options)
    except TypeError as e:
        takes = [p for p in list(signature.parameters)[1:] if p != "gamma"]
        raise UserError(
            f"reward_augmentation_kwargs do not fit {name!r} ({e}); it takes: "
            f"{', '.join(takes) or 'no arguments'}"
        ) from None


def reward_augmentation_from_hparams(hparams: Any) -> Callable[[gym.Env], gym.Env] | None:
    """A function that wraps one training env with the set's augmentation (None: no
    augmentation). `KeepTrueReward` goes below it, so `info["true_reward"]` is the env's own."""
    check_reward_augmentation(hparams)
    name = hparams.reward_augmentation
    if name is None:
        return None
    factory = registry.get_reward_augmentation(name)
    options = _options(factory, hparams.reward_augmentation_kwargs, hparams.gamma)
    return lambda env: factory(KeepTrueReward(env), **options)


def true_rewards(reward: np.ndarray, info: dict[str, Any]) -> np.ndarray:
    """The env's own rewards of one vector step: `info["true_reward"]` where an augmentation
    recorded it, else `reward`. With AutoresetMode.SAME_STEP the step that ends an episode keeps
    its info in `info["final_info"]`, so that is read for those copies."""
    result = np.asarray(reward, np.float64)
    for source in (info, info.get("final_info") or {}):
        if TRUE_REWARD in source:
            result = np.where(source[f"_{TRUE_REWARD}"], source[TRUE_REWARD], result)
    return result
