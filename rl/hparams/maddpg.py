"""MADDPG hparams sets: Lowe et al. 2017, https://arxiv.org/abs/1706.02275, with the settings
of the paper's reference code (github.com/openai/maddpg)."""

from __future__ import annotations

from rl.hparams.hparams import HParams
from rl.hparams.off_policy_continuous import off_policy_continuous, smoke_test_replay
from rl.hparams.schedules import Schedule
from rl.registry import register_hparams

SIMPLE_SPREAD = {"N": 3, "local_ratio": 0.5, "max_cycles": 25}


@register_hparams("maddpg")
def maddpg() -> HParams:
    """The paper's settings on MPE's cooperative navigation (simple_spread, 3 agents)."""
    hp = off_policy_continuous().update(agent="maddpg", env="mpe/simple_spread_v3", lr=1e-2)
    hp.update(gamma=0.95, hidden_sizes=[64, 64], tau=0.01, max_grad_norm=0.5)
    hp.num_critics = 1  # one centralized critic per agent (the only value maddpg accepts)
    hp.update(batch_size=1024, learning_starts=25_600, train_every=100, gradient_steps=1)
    hp.update(env_kwargs=dict(SIMPLE_SPREAD), train_steps=1_500_000, checkpoint_every=100_000)
    hp.eval.every_steps = 25_000
    hp.add(
        "action_function",
        "gaussian_noise",
        "Registered action function, role action_noise (train.py --list): gaussian_noise.",
    )
    hp.add(
        "action_noise_std",
        0.1,
        "Gaussian exploration noise std per action entry, in units of the action half-range; a "
        "number or a schedule of the env step.",
        type=Schedule,
    )
    return hp.add(
        "share_actor", False, "One actor shared by all agents (needs equal action bounds)."
    )


@register_hparams("maddpg_simple_spread")
def maddpg_simple_spread() -> HParams:
    """simple_spread (3 agents, 25 steps) in a few minutes of CPU: more gradient steps per env step
    than the paper, a smaller learning rate, one shared actor (the slow learning test's set)."""
    hp = maddpg().update(share_actor=True, num_envs=4, train_steps=60_000, lr=1e-3)
    hp.update(batch_size=256, learning_starts=2_500, train_every=100, gradient_steps=25)
    hp.eval.every_steps = 10_000
    return hp.update(buffer_size=200_000, checkpoint_every=20_000)


@register_hparams("maddpg_tiny")
def maddpg_tiny() -> HParams:
    """A few hundred simple_spread steps (2 agents) with prioritized replay: smoke tests."""
    hp = smoke_test_replay(maddpg())
    return hp.update(env_kwargs={"N": 2, "local_ratio": 0.5, "max_cycles": 10})
