"""LegalMoves-v0 sets (rl/envs/legal_moves.py, docs/masking.md): masked actions where illegal
ones end the episode. `*_legal_moves` learn it (a mean return near the best policy's 12.9);
`dqn_legal_moves_tiny` is a smoke test (the mask as a Dict key; `env_kwargs={'mask_in_info':
True}` moves it to info)."""

from __future__ import annotations

from rl.hparams.common import rollouts, smoke_test_settings
from rl.hparams.dqn import dqn, dqn_tiny
from rl.hparams.hparams import HParams
from rl.hparams.ppo import ppo
from rl.registry import register_hparams

ENV = "LegalMoves-v0"


@register_hparams("ppo_legal_moves")
def ppo_legal_moves() -> HParams:
    """PPO with masked logits: 8 envs x 64 steps, 10 epochs, 50k steps."""
    hp = rollouts(ppo(), num_envs=8, steps_per_env=64, batch_size=128, n_epochs=10)
    hp.update(env=ENV, train_steps=50_000, ent_coef=0.0)
    hp.eval.update(every_steps=10_000, episodes=20)
    return hp


@register_hparams("dqn_legal_moves")
def dqn_legal_moves() -> HParams:
    """DQN with masked argmax and masked targets, 20k steps."""
    hp = dqn().update(env=ENV, train_steps=20_000, buffer_size=20_000, learning_starts=1_000)
    hp.update(epsilon="linear(1.0, 0.05, 5000)", target_update_period=250, gamma=0.9)
    hp.eval.update(every_steps=5_000, episodes=20)
    return hp


@register_hparams("dqn_legal_moves_tiny")
def dqn_legal_moves_tiny() -> HParams:
    """dqn_tiny on LegalMoves-v0 (Dict observation with the mask; prioritized, dueling, 3-step)."""
    return smoke_test_settings(dqn_tiny().update(env=ENV), every=300, log_every=100)
