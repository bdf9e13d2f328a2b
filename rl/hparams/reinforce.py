"""REINFORCE hparams sets (Williams 1992); rl/agents/reinforce.py says how episodes that straddle
batches are handled.
"""

from __future__ import annotations

from rl.hparams.common import cartpole_protocol, rollouts, smoke_test_settings
from rl.hparams.hparams import HParams
from rl.hparams.on_policy import on_policy
from rl.registry import register_hparams


@register_hparams("reinforce")
def reinforce() -> HParams:
    """Monte-Carlo returns, one gradient step per batch, no baseline."""
    hp = on_policy().update(agent="reinforce", advantage_estimator="discounted_returns")
    hp.add("baseline", False, "Subtract a learned value baseline V(s) from the returns.")
    return hp.update(
        train_every=2048, batch_size=2048, n_epochs=1, normalize_advantage=True, lr=1e-3
    )


@register_hparams("reinforce_baseline_cartpole")
def reinforce_baseline_cartpole() -> HParams:
    """CartPole-v1 with a value baseline in its own torso, one step per 1024-step batch at lr 5e-3
    (tuned on seed 0: 81,920 steps to 475; 2048-step batches at 1e-3 needed ~480k)."""
    hp = cartpole_protocol(reinforce(), eval_every_steps=10_240)
    rollouts(hp, num_envs=8, steps_per_env=128, batch_size=1024)
    return hp.update(baseline=True, separate_torsos=True, lr=5e-3, train_steps=300_000)


@register_hparams("reinforce_tiny")
def reinforce_tiny() -> HParams:
    """A few hundred CartPole steps without a baseline (incomplete episodes dropped)."""
    hp = rollouts(reinforce(), num_envs=2, steps_per_env=100, batch_size=100, n_epochs=2)
    hp.update(env="CartPole-v1", train_steps=400, hidden_sizes=[16])
    return smoke_test_settings(hp, every=200, log_every=100, max_episode_steps=40)
