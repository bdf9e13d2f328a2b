"""Atari 2600 games through ale-py, with the standard DQN/PPO preprocessing.

The wrapper stack and its options (`env_kwargs`) are the table in docs/environments.md, built
by `make_atari` innermost first. Sticky actions default to 0.25 (Machado et al. 2018,
https://arxiv.org/abs/1709.06009). gymnasium's own `terminal_on_life_loss` is never used: it
resets the whole game on a life loss, so a full game would never be played (`EpisodicLife`
instead). `GameScore` sits below the reward clipping and episodic life, so evaluation reports
the number papers report whatever the layers above do. Without `FireReset`, a policy that never
presses FIRE waits forever and plays every evaluation game to its time limit. A misspelled
option is a UserError that names the valid ones.
"""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym
import numpy as np

from rl.errors import UserError, did_you_mean

DEFAULT_STICKY = 0.25
_registered = False


def _register_ale() -> None:
    """Registers ale-py's ids with gymnasium once (ale-py imports lazily: only Atari users pay)."""
    global _registered
    if _registered:
        return
    try:
        import ale_py
    except ImportError as e:  # pragma: no cover - ale-py is pinned in requirements.txt
        raise UserError(
            f"Atari envs need ale-py ({e}); install rl with its `atari` extra "
            "(pip install -e '.[atari]') or run ./setup.sh"
        ) from None
    gym.register_envs(ale_py)
    # The emulator prints a banner on every env; keep stderr for real errors.
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    _registered = True


def is_atari_id(name: str) -> bool:
    """Whether `name` is an ale-py gymnasium id. ale-py is imported only for a name gymnasium
    does not know yet, so CartPole users never load the emulator."""
    if name not in gym.registry:
        _register_ale()
    spec = gym.registry.get(name)
    return spec is not None and spec.entry_point == "ale_py.env:AtariEnv"


def check_sticky_actions(env: str, sticky_actions: bool | None) -> None:
    """UserError unless `env` is an Atari env, the only ones with sticky actions to switch."""

    if sticky_actions is not None and not is_atari_id(env):
        raise UserError(
            f"eval.sticky_actions={sticky_actions} applies to Atari envs only and "
            f"env {env!r} has no sticky actions; leave eval.sticky_actions=None"
        )


class GameScore(gym.Wrapper):
    """Adds `game_score` (raw reward sum) and `game_length` (agent steps) to the info of the step
    that ends a full game (terminated: game over; truncated: time limit)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._score = 0.0
        self._length = 0

    @property
    def score_so_far(self) -> float:
        """The raw score of the game being played (an evaluation cut short reports it)."""
        return self._score

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._score, self._length = 0.0, 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._score += float(reward)
        self._length += 1
        if terminated or truncated:
            info = {**info, "game_score": self._score, "game_length": self._length}
        return obs, reward, terminated, truncated, info


class EpisodicLife(gym.Wrapper):
    """A lost life ends the episode (terminated) without restarting the game (Mnih et al. 2015;
    baselines' EpisodicLifeEnv): `reset` then continues the game with one NOOP step, and restarts it
    only after game over, a time limit, or given a seed or options (the trainer's seeded resets)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._lives = 0
        self._game_over = True

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._game_over = bool(terminated or truncated)
        lives = self.env.unwrapped.ale.lives()
        if 0 < lives < self._lives:
            terminated = True
        self._lives = lives
        return obs, reward, terminated, truncated, info

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if self._game_over or seed is not None or options:
            obs, info = self.env.reset(seed=seed, options=options)
        else:
            obs, _, terminated, truncated, info = self.env.step(0)
            if terminated or truncated:  # the game ended during the NOOP: start a new one
                obs, info = self.env.reset()
        self._game_over = False
        self._lives = self.env.unwrapped.ale.lives()
        return obs, info


def needs_fire(env: gym.Env) -> bool:
    """Whether the game waits for FIRE to start (its actions begin NOOP, FIRE: Breakout, Pong,
    ...): the test rl-baselines3-zoo's AtariWrapper uses to add its FireResetEnv."""
    meanings = env.unwrapped.get_action_meanings()
    return len(meanings) >= 3 and meanings[1] == "FIRE"


class FireReset(gym.Wrapper):
    """After a reset, plays FIRE and then action 2 (as baselines' FireResetEnv; gymnasium has
    none), so the game is under way when the agent first acts. Their rewards are not passed on
    (GameScore, below, still counts them in the raw game score)."""

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        for action in (1, 2):
            obs, _, terminated, truncated, info = self.env.step(action)
            if terminated or truncated:
                obs, info = self.env.reset(seed=seed, options=options)
        return obs, info


class ChannelsLast(gym.ObservationWrapper):
    """[stack, H, W] -> [H, W, stack] (TF's NHWC convolutions), newest frame last."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.observation_space
        self.frame_stack = int(space.shape[0])
        self.observation_space = gym.spaces.Box(
            low=np.moveaxis(space.low, 0, -1),
            high=np.moveaxis(space.high, 0, -1),
            dtype=space.dtype,
        )

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(observation, 0, -1))


def make_atari(
    env_id: str,
    *,
    repeat_action_probability: float = DEFAULT_STICKY,
    noop_max: int = 30,
    frame_skip: int = 4,
    screen_size: int = 84,
    terminal_on_life_loss: bool = False,
    clip_rewards: bool = False,
    frame_stack: int = 4,
    full_action_space: bool = False,
    fire_reset: bool = True,
    max_episode_steps: int | None = None,
    render_mode: str | None = None,
) -> gym.Env:
    """One preprocessed Atari env (the wrapper order: docs/environments.md)."""
    _register_ale()
    if not 0.0 <= repeat_action_probability <= 1.0:
        raise UserError(
            f"Atari repeat_action_probability must be in [0, 1], got {repeat_action_probability}"
        )
    for key, value, low in (
        ("noop_max", noop_max, 0),
        ("frame_skip", frame_skip, 1),
        ("frame_stack", frame_stack, 1),
        ("screen_size", screen_size, 36),  # the Nature CNN's smallest input
    ):
        if not isinstance(value, int) or value < low:
            raise UserError(f"Atari {key} must be an integer >= {low}, got {value!r}")
    env = gym.make(
        env_id,
        frameskip=1,
        repeat_action_probability=float(repeat_action_probability),
        full_action_space=full_action_space,
        render_mode=render_mode,
    )
    env = gym.wrappers.AtariPreprocessing(
        env,
        noop_max=noop_max,
        frame_skip=frame_skip,
        screen_size=screen_size,
        terminal_on_life_loss=False,
        grayscale_obs=True,
    )
    if max_episode_steps is not None:
        env = gym.wrappers.TimeLimit(env, max_episode_steps=max_episode_steps)
    env = GameScore(env)
    if terminal_on_life_loss:
        env = EpisodicLife(env)
    if not isinstance(fire_reset, bool):
        raise UserError(f"Atari fire_reset must be true or false, got {fire_reset!r}")
    if fire_reset and needs_fire(env):
        env = FireReset(env)
    if clip_rewards:
        env = gym.wrappers.ClipReward(env, -1.0, 1.0)
    env = gym.wrappers.FrameStackObservation(env, frame_stack)
    return ChannelsLast(env)


ATARI_OPTIONS = tuple(
    name
    for name, p in inspect.signature(make_atari).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
)


def check_atari_kwargs(env_id: str, env_kwargs: dict[str, Any]) -> None:
    """Raises UserError for an env_kwargs key make_atari does not take."""
    for key in env_kwargs:
        if key not in ATARI_OPTIONS:
            raise UserError(
                f"env {env_id!r}: unknown Atari option {key!r}{did_you_mean(key, ATARI_OPTIONS)}; "
                f"env_kwargs may set {', '.join(ATARI_OPTIONS)}"
            )


def atari_frame_stack(env_kwargs: dict[str, Any]) -> int:
    """How many frames an Atari observation stacks along its last axis."""
    return int(env_kwargs.get("frame_stack", 4))
