"""Keys shared by the off-policy continuous-control families (td3/ddpg, sac); not a registered set.
Defaults are Stable-Baselines3's, with updates run as `gradient_steps` steps every
`train_every` env steps in one compiled call (the same 1:1 ratio).
"""

from __future__ import annotations

from rl.hparams.common import (
    add_prioritized_replay_keys,
    add_replay_keys,
    base,
    smoke_test_settings,
)
from rl.hparams.hparams import HParams
from rl.hparams.schedules import Schedule


def off_policy_continuous() -> HParams:
    """Replay, warm-up, target-update and critic keys of every continuous off-policy agent."""
    hp = base().update(env="Pendulum-v1", train_every=64)
    add_replay_keys(hp, buffer_size=1_000_000, batch_size=256, learning_starts=100)
    hp.add(
        "gradient_steps", 64, "Gradient steps per compiled update call; SB3's 1:1 = train_every."
    )
    hp.add(
        "tau",
        0.005,
        "Polyak rate of the target networks: target += tau (online - target); a number or a "
        "schedule of the gradient step.",
        type=Schedule,
    )
    hp.add("num_critics", 2, "Q networks; targets use their minimum (clipped double Q).")
    add_prioritized_replay_keys(hp)
    hp.update(hidden_sizes=[256, 256], max_grad_norm=0.0, lr=3e-4, train_steps=1_000_000)
    hp.eval.every_steps = 10_000
    return hp


def add_torch_init_key(hp: HParams) -> HParams:
    """`torch_init` and `normalize_obs` for the agents whose networks they change (SAC,
    TD3/DDPG)."""
    hp.add(
        "torch_init",
        False,
        "Initialize actor and critics as PyTorch's defaults (Linear: U(+-1/sqrt(fan_in)) kernels "
        "and biases), as SB3's SAC, TD3 and DDPG; False: Keras' Glorot kernels and zero biases.",
    )
    return hp.add(
        "normalize_obs",
        False,
        "Standardize observations by running mean/variance of the training envs' observations, "
        "clipped to +-10 (SB3's VecNormalize norm_obs), inside the actor and critics; replay "
        "keeps them raw.",
    )


def pendulum_protocol(hp: HParams) -> HParams:
    """Pendulum-v1 as the sac and td3 sets run it (20k env steps, evaluated every 2000)."""
    hp.update(env="Pendulum-v1", train_steps=20_000, buffer_size=200_000, learning_starts=1000)
    hp.eval.every_steps = 2000
    return hp.update(checkpoint_every=10_000)


def smoke_test_replay(hp: HParams) -> HParams:
    """The continuous off-policy `*_tiny` sets: a few hundred steps, a small prioritized replay."""
    hp.update(train_steps=400, buffer_size=1000, batch_size=16, learning_starts=100, train_every=50)
    hp.update(gradient_steps=4, hidden_sizes=[16], memory="prioritized")
    return smoke_test_settings(hp, every=200, log_every=100)
