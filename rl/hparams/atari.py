"""Atari hparams sets. Each writes all of its preprocessing out in `env_kwargs`
(rl/envs/atari.py), so hparams.json records exactly what the agent saw: rl-baselines3-zoo's
AtariWrapper, with sticky actions at 0.25 as Machado et al. 2018 recommend
(https://arxiv.org/abs/1709.06009). Evaluation is the papers' protocol
(docs/evaluation_protocol.md): full games, the raw score, a 27,000-step cap, sticky actions on;
DQN is epsilon-greedy with 0.05 (Mnih et al. 2015), PPO samples its actions as the zoo does,
since its greedy policy can stall a game (the paddle waiting in Breakout).
"""

from __future__ import annotations

from typing import Any

from rl.hparams.common import rollouts, smoke_test_settings
from rl.hparams.dqn import dqn
from rl.hparams.hparams import HParams
from rl.hparams.ppo import ppo
from rl.registry import register_hparams

# Agent steps in 30 minutes of play at 60 frames/s with frame skip 4.
FULL_GAME_STEPS = 27_000


def atari_env_kwargs(**changes: Any) -> dict[str, Any]:
    """The standard preprocessing, spelled out (make_atari's options)."""
    return {
        "repeat_action_probability": 0.25,
        "noop_max": 30,
        "frame_skip": 4,
        "screen_size": 84,
        "frame_stack": 4,
        "terminal_on_life_loss": True,
        "clip_rewards": True,
        "fire_reset": True,  # FIRE after each reset in games that need it (zoo's FireResetEnv)
        **changes,
    }


def _atari_eval(hp: HParams, *, epsilon: float = 0.0, sample_actions: bool = False) -> HParams:
    hp.eval.update(every_steps=250_000, episodes=10, epsilon=epsilon, sample_actions=sample_actions)
    hp.eval.update(max_episode_steps=FULL_GAME_STEPS, sticky_actions=True)
    return hp


@register_hparams("dqn_pong")
def dqn_pong() -> HParams:
    """Nature DQN on Pong with rl-baselines3-zoo's Atari settings."""
    hp = dqn().update(env="ALE/Pong-v5", env_kwargs=atari_env_kwargs(), train_steps=10_000_000)
    hp.update(buffer_size=100_000, batch_size=32, learning_starts=100_000, lr=1e-4, train_every=4)
    hp.target_update_period = 250  # gradient steps: 1000 env steps at one step per 4
    hp.update(epsilon="linear(1.0, 0.01, 1000000)", hidden_sizes=[512], activation="relu")
    hp.update(gradient_steps=1, checkpoint_every=250_000, log_every=10_000)
    return _atari_eval(hp, epsilon=0.05)


def _ppo_atari(env: str) -> HParams:
    """rl-baselines3-zoo's PPO Atari entry on `env`."""
    hp = rollouts(ppo(), num_envs=8, steps_per_env=128, batch_size=256, n_epochs=4)
    hp.update(env=env, env_kwargs=atari_env_kwargs(), train_steps=10_000_000, gamma=0.99)
    hp.update(gae_lambda=0.95, ent_coef=0.01, vf_coef=0.5)
    # 10M / 1024 updates x 4 epochs x 4 minibatches = 156,250 gradient steps.
    hp.update(lr="linear(2.5e-4, 0.0, 156250)", clip_range="linear(0.1, 0.0, 156250)")
    hp.update(separate_torsos=False, hidden_sizes=[512], activation="relu")
    hp.update(checkpoint_every=250_000, log_every=10_240)
    return _atari_eval(hp, sample_actions=True)


@register_hparams("ppo_pong")
def ppo_pong() -> HParams:
    """PPO on Pong (rl-baselines3-zoo's Atari settings)."""
    return _ppo_atari("ALE/Pong-v5")


@register_hparams("ppo_breakout")
def ppo_breakout() -> HParams:
    """PPO on Breakout (rl-baselines3-zoo's Atari settings)."""
    return _ppo_atari("ALE/Breakout-v5")


def _tiny_atari(hp: HParams) -> HParams:
    """A couple hundred steps with game caps so that games end inside them."""
    hp.hidden_sizes = [32]
    hp.eval.max_episode_steps = 40
    # max_episode_steps caps each game: raw full-game scores appear in training too.
    return smoke_test_settings(hp, every=128, log_every=64, max_episode_steps=100, eval_episodes=1)


@register_hparams("dqn_atari_tiny")
def dqn_atari_tiny() -> HParams:
    """Breakout (lives: episodic life ends episodes inside games) through the frame replay with
    prioritized 3-step sampling: smoke tests, not learning."""
    hp = dqn_pong().update(env="ALE/Breakout-v5", train_steps=256, buffer_size=1000, batch_size=8)
    hp.update(learning_starts=64, train_every=32, gradient_steps=2, target_update_period=4)
    hp.update(epsilon="linear(1.0, 0.1, 200)", memory="prioritized", n_step=3)
    return _tiny_atari(hp)


@register_hparams("ppo_atari_tiny")
def ppo_atari_tiny() -> HParams:
    """Pong with 2 envs x 32-step rollouts: smoke tests, not learning."""
    hp = rollouts(ppo_pong(), num_envs=2, steps_per_env=32, batch_size=32, n_epochs=2)
    hp.update(train_steps=256, lr=2.5e-4, clip_range=0.1)
    # 50-step games: each env copy steps 64 times between checkpoint cuts.
    return _tiny_atari(hp).update(max_episode_steps=50)
