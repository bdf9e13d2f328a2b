"""Atari preprocessing on real ROMs (ale-py ships them): wrapper settings, frame stacks,
episodic life that does not restart the game, raw game scores, and option errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from rl.envs import make_vector_env
from rl.envs.atari import EpisodicLife, FireReset, GameScore, is_atari_id, make_atari
from rl.errors import UserError
from rl.hparams.atari import atari_env_kwargs
from rl.utils.video import play_episode


def test_standard_preprocessing_settings():
    env = make_atari("ALE/Pong-v5")
    ale = env.unwrapped.ale
    env.reset(seed=0)
    frame = ale.getEpisodeFrameNumber()
    env.unwrapped.step(0)  # the ALE env itself advances one frame: AtariPreprocessing does the
    assert ale.getEpisodeFrameNumber() == frame + 1  # skip + max-pool
    assert ale.getFloat("repeat_action_probability") == pytest.approx(0.25)
    preprocessing = env.get_wrapper_attr("noop_max"), env.get_wrapper_attr("frame_skip")
    assert preprocessing == (30, 4)
    assert env.observation_space.shape == (84, 84, 4) and env.observation_space.dtype == np.uint8
    assert env.get_wrapper_attr("frame_stack") == 4
    obs, _ = env.reset(seed=0)
    assert all(np.array_equal(obs[..., 0], obs[..., k]) for k in range(4))  # reset padding
    for _ in range(5):
        next_obs, *_ = env.step(env.action_space.sample())
        np.testing.assert_array_equal(next_obs[..., :-1], obs[..., 1:])  # newest frame last
        obs = next_obs
    env.close()
    no_sticky = make_atari("ALE/Pong-v5", repeat_action_probability=0.0)
    assert no_sticky.unwrapped.ale.getFloat("repeat_action_probability") == 0.0
    no_sticky.close()


def wrapper_chain(env: gym.Env) -> list[gym.Env]:
    """The env and every layer under it, outermost first."""
    chain = [env]
    while hasattr(chain[-1], "env"):
        chain.append(chain[-1].env)
    return chain


def noops_until_life_lost(env: gym.Env, limit: int) -> int | None:
    """NOOP steps until the lives counter drops (None if it never does within `limit`)."""
    lives = env.unwrapped.ale.lives()
    for step in range(1, limit + 1):
        env.step(0)
        if env.unwrapped.ale.lives() < lives:
            return step
    return None


def test_fire_reset_starts_games_that_wait_for_fire():
    # Breakout waits for FIRE to launch the ball: with NOOPs only the screen never changes and
    # no life is ever lost. FireReset launches it at reset, so the unmoving paddle misses it.
    options = {"repeat_action_probability": 0.0, "noop_max": 0}
    off = make_atari("ALE/Breakout-v5", fire_reset=False, **options)
    first, _ = off.reset(seed=0)
    assert noops_until_life_lost(off, 300) is None
    np.testing.assert_array_equal(off.step(0)[0], first)  # still the waiting screen
    off.close()

    on = make_atari("ALE/Breakout-v5", terminal_on_life_loss=True, **options)  # the default
    assert any(isinstance(layer, FireReset) for layer in wrapper_chain(on))
    on.reset(seed=0)
    assert noops_until_life_lost(on, 300) is not None
    assert on.unwrapped.ale.lives() == 4
    on.reset()  # episodic life: the same game goes on, and the ball is launched again
    assert noops_until_life_lost(on, 300) is not None
    assert on.unwrapped.ale.lives() == 3
    on.close()

    # Games whose actions do not start NOOP, FIRE are left alone (Freeway: NOOP, UP, DOWN).
    freeway = make_atari("ALE/Freeway-v5")
    assert not any(isinstance(layer, FireReset) for layer in wrapper_chain(freeway))
    freeway.close()
    with pytest.raises(UserError, match="fire_reset must be true or false"):
        make_atari("ALE/Breakout-v5", fire_reset="yes")


def play_until_game_over(env: gym.Env, action: int, seed: int):
    """Steps with a fixed action across resets until the game ends; returns the per-episode
    (reward sum, lives at the end) list and the game's info."""
    env.reset(seed=seed)
    episodes, total = [], 0.0
    while True:
        _, reward, terminated, truncated, info = env.step(action)
        total += reward
        if terminated or truncated:
            episodes.append((total, env.unwrapped.ale.lives()))
            total = 0.0
            if "game_score" in info:
                return episodes, info
            env.reset()


def test_episodic_life_ends_episodes_but_not_the_game():
    # FIRE only: Breakout launches the ball and never moves the paddle, so lives go quickly.
    env = make_atari("ALE/Breakout-v5", terminal_on_life_loss=True, clip_rewards=True)
    assert any(isinstance(layer, EpisodicLife) for layer in wrapper_chain(env))
    episodes, info = play_until_game_over(env, action=1, seed=3)
    # One episode per life: lives 4, 3, 2, 1 after the first four, game over after the fifth.
    assert [lives for _, lives in episodes] == [4, 3, 2, 1, 0]
    assert info["game_length"] >= len(episodes)
    # The raw game score is the unclipped sum over all five episodes (Breakout's bricks are
    # worth 1, 4 or 7: clipped episode returns can only undercount it).
    assert info["game_score"] >= sum(r for r, _ in episodes)
    env.close()

    plain = make_atari("ALE/Breakout-v5")
    episodes, info = play_until_game_over(plain, action=1, seed=3)
    assert len(episodes) == 1 and episodes[0][1] == 0
    assert info["game_score"] == episodes[0][0]  # no clipping, one episode: the same number
    plain.close()


def test_seeded_reset_starts_a_new_game_even_after_a_lost_life():
    env = make_atari("ALE/Breakout-v5", terminal_on_life_loss=True)
    env.reset(seed=0)
    while True:
        *_, terminated, _, _ = env.step(1)
        if terminated:
            break
    assert env.unwrapped.ale.lives() == 4
    env.reset()
    assert env.unwrapped.ale.lives() == 4  # soft reset: same game
    env.reset(seed=1)
    assert env.unwrapped.ale.lives() == 5  # a seeded reset is a new game
    env.close()


def test_game_score_wrapper_reports_on_truncation():
    env = GameScore(gym.wrappers.TimeLimit(gym.make("CartPole-v1"), max_episode_steps=3))
    env.reset(seed=0)
    infos = [env.step(0)[-1] for _ in range(3)]
    assert "game_score" not in infos[0] and "game_score" not in infos[1]
    assert infos[2]["game_score"] == 3.0 and infos[2]["game_length"] == 3


def test_vector_env_spec_and_game_cap():
    env, spec = make_vector_env(
        "ALE/Pong-v5", 2, seed=0, env_kwargs={"frame_stack": 3}, max_episode_steps=25
    )
    assert spec.obs_shape == (84, 84, 3) and spec.frame_stack == 3 and spec.reports_game_score
    assert spec.num_actions == 6
    # Pong starts with FireReset's two steps (FIRE, then action 2): the cap is on the whole
    # game, so they count, and the agent's own steps end the game at 23.
    for step in range(1, 24):
        _, _, terminated, truncated, info = env.step(np.zeros(2, np.int64))
        if step < 23:
            assert not (terminated | truncated).any()
    assert truncated.all()  # the cap is on the game, reported as the game's end
    np.testing.assert_array_equal(info["final_info"]["game_length"], [25, 25])
    env.close()
    _, cartpole = make_vector_env("CartPole-v1", 1, seed=0)
    assert cartpole.frame_stack == 0 and not cartpole.reports_game_score


def test_atari_ids_and_option_errors():
    assert is_atari_id("ALE/Breakout-v5") and is_atari_id("PongNoFrameskip-v4")
    assert not is_atari_id("CartPole-v1")
    with pytest.raises(UserError, match=r"'clip_reward'.*did you mean 'clip_rewards'"):
        make_vector_env("ALE/Pong-v5", 1, 0, env_kwargs={"clip_reward": True})
    with pytest.raises(UserError, match="screen_size must be an integer >= 36"):
        make_vector_env("ALE/Pong-v5", 1, 0, env_kwargs={"screen_size": 20})


def test_video_of_an_atari_game_plays_through_lost_lives():
    """Evaluation scores full games, so the video (play_episode) must show one too, not the
    first life that episodic life ends."""
    kwargs = {**atari_env_kwargs(), "render_mode": "rgb_array"}
    vec_env, _ = make_vector_env("ALE/Breakout-v5", 1, 0, env_kwargs=kwargs)
    env = vec_env.envs[0]
    noop = lambda obs: np.zeros(len(obs), np.int64)  # noqa: E731 - FireReset serves the ball

    life = play_episode(env, noop, seed=3)
    assert env.unwrapped.ale.lives() == 4 and len(life.frames) == life.length + 1

    game = play_episode(env, noop, seed=3, full_game=True)
    vec_env.close()
    assert env.unwrapped.ale.lives() == 0
    # The same first life (same seed), then four more, each after one reset frame.
    first = np.stack(game.frames[: life.length + 1])
    assert np.array_equal(first, np.stack(life.frames))
    assert game.length > life.length and len(game.frames) == game.length + 1 + 4
