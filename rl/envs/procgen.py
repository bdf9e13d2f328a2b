"""CoinRun (procgen) as a gymnasium env: "procgen/coinrun".

CoinRun is the environment of Cobbe et al. 2018 (https://arxiv.org/abs/1812.02341); procgen is
its maintained successor (Cobbe et al. 2019, https://arxiv.org/abs/1912.01588), a C library
behind gym3's `libenv` interface. How gym3 is adapted to gymnasium (episode ends, seeding, the
free `reset()`), the options and the install: docs/environments.md, section "CoinRun".
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import numpy as np

from rl.errors import UserError
from rl.registry import register_env

# Episode time limit of each game this module registers (procgen's Game default is 1000 steps;
# some games set their own, e.g. plunder 4000, so only games checked here are registered).
TIMEOUTS = {"coinrun": 1000}
# Modes procgen's coinrun accepts (game.cpp: "extreme" and "memory" are for other games).
DISTRIBUTION_MODES = {"easy": 0, "hard": 1}
BOOL_OPTIONS = (
    "use_backgrounds",
    "restrict_themes",
    "use_monochrome_assets",
    "center_agent",
    "paint_vel_info",
    "use_generated_assets",
    "use_sequential_levels",
)


def _procgen_env_class() -> type:
    """procgen's ProcgenGym3Env, imported on first use (procgen is an optional dependency)."""
    try:
        saved = os.environ.get("SDL_AUDIODRIVER")
        from procgen import ProcgenGym3Env
    except ImportError as e:
        raise UserError(
            f"procgen is not installed ({e}); install it with `.venv/bin/pip install "
            "--no-deps -r requirements-procgen.txt` (./setup.sh does this)"
        ) from None
    finally:
        # Importing procgen imports the old gym, which sets SDL_AUDIODRIVER=dsp for pygame.
        if saved is None:
            os.environ.pop("SDL_AUDIODRIVER", None)
        else:
            os.environ["SDL_AUDIODRIVER"] = saved
    return ProcgenGym3Env


class ProcgenEnv(gym.Env):
    """One procgen game as a gymnasium env: uint8 [64, 64, 3] frames, 15 discrete actions."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 15}

    def __init__(
        self,
        game: str = "coinrun",
        distribution_mode: str = "hard",
        num_levels: int = 0,
        start_level: int = 0,
        render_mode: str | None = None,
        **options: bool,
    ) -> None:
        if game not in TIMEOUTS:
            raise UserError(
                f"procgen game {game!r} is not adapted here; choose from {list(TIMEOUTS)}"
            )
        if distribution_mode not in DISTRIBUTION_MODES:
            raise UserError(
                f"procgen distribution_mode {distribution_mode!r} is not valid for {game}; "
                f"choose from {list(DISTRIBUTION_MODES)}"
            )
        if num_levels < 0 or start_level < 0:
            raise UserError(
                f"procgen num_levels and start_level must be >= 0, got {num_levels}, {start_level}"
            )
        unknown = sorted(set(options) - set(BOOL_OPTIONS))
        if unknown:
            raise UserError(
                f"unknown procgen option(s) {unknown}; valid: game, distribution_mode, "
                f"num_levels, start_level, render_mode, {', '.join(BOOL_OPTIONS)}"
            )
        if render_mode not in (None, "rgb_array"):
            raise UserError(f"procgen renders rgb_array only, not {render_mode!r}")
        self._gym3_class = _procgen_env_class()
        self.timeout = TIMEOUTS[game]
        self.render_mode = render_mode
        self._options = {
            "env_name": game,
            "distribution_mode": distribution_mode,
            "num_levels": num_levels,
            "start_level": start_level,
            **{k: bool(v) for k, v in options.items()},
        }
        self.observation_space = gym.spaces.Box(0, 255, (64, 64, 3), np.uint8)
        self.action_space = gym.spaces.Discrete(15)
        self._gym3: Any = None
        self._obs: np.ndarray | None = None  # the latest frame of the running episode
        self._next_episode_obs: np.ndarray | None = None  # set when the game restarted itself
        self._steps = 0

    # -------------------------------------------------------------------------- gym API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None or self._next_episode_obs is None:
            self._start(rand_seed=int(self.np_random.integers(2**31 - 1)))
        else:  # the game already started the next level at the end of the last episode
            self._obs, self._next_episode_obs = self._next_episode_obs, None
        self._steps = 0
        return self._obs, self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._obs is None or self._next_episode_obs is not None:
            raise RuntimeError("call reset() before step() (the episode is over)")
        self._gym3.act(np.asarray([action], np.int32))
        reward, frames, first = self._gym3.observe()
        self._steps += 1
        info = self._info()
        frame = np.array(frames["rgb"][0])  # a copy: gym3 may reuse its buffer
        if not first[0]:
            self._obs = frame
            return frame, float(reward[0]), False, False, info
        # The episode ended and the game is already in the next level (docs/environments.md).
        self._next_episode_obs = frame
        truncated = self._steps >= self.timeout and not info["level_complete"]
        return self._obs, float(reward[0]), not truncated, truncated, info

    def render(self) -> np.ndarray | None:
        """The game's 512x512 frame (rgb_array mode); at an episode's end, the next level's."""
        if self.render_mode != "rgb_array" or self._gym3 is None:
            return None
        return np.array(self._gym3.get_info()[0]["rgb"])

    def close(self) -> None:
        if self._gym3 is not None:
            self._gym3.close()
            self._gym3 = None

    # ----------------------------------------------------------------------- internals
    def _start(self, rand_seed: int) -> None:
        self.close()
        self._gym3 = self._gym3_class(
            num=1, num_threads=0, rand_seed=rand_seed, render_mode=self.render_mode, **self._options
        )
        _, frames, _ = self._gym3.observe()
        self._obs, self._next_episode_obs = np.array(frames["rgb"][0]), None

    def _info(self) -> dict[str, Any]:
        raw = self._gym3.get_info()[0]
        return {
            "level_seed": int(raw["level_seed"]),
            "level_complete": bool(raw["prev_level_complete"]),
        }


@register_env("procgen/coinrun")
def coinrun(**kwargs: Any) -> ProcgenEnv:
    """CoinRun; `env_kwargs` are ProcgenEnv's options (distribution_mode, num_levels, ...)."""
    if "game" in kwargs:
        raise UserError("procgen/coinrun fixes game='coinrun'; remove 'game' from env_kwargs")
    return ProcgenEnv(game="coinrun", **kwargs)
