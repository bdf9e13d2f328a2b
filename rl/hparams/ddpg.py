"""DDPG hparams sets: the TD3 agent with its tricks off (one critic, no target smoothing, policy
delay 1), as Stable-Baselines3 does it. Lillicrap et al. 2015, "Continuous control with deep
reinforcement learning", https://arxiv.org/abs/1509.02971."""

from __future__ import annotations

from rl.hparams.hparams import HParams
from rl.hparams.td3 import td3, td3_pendulum, td3_tiny
from rl.registry import register_hparams


def as_ddpg(hp: HParams) -> HParams:
    """`hp`, a TD3 set, turned into DDPG: any TD3 set has a DDPG twin (e.g. for MountainCar)."""
    hp.update(agent="ddpg", num_critics=1, policy_delay=1, target_policy_noise=0.0)
    return hp.update(target_noise_clip=0.0)


@register_hparams("ddpg")
def ddpg() -> HParams:
    """SB3's DDPG defaults: td3's with one critic, no smoothing, an actor step per critic step."""
    return as_ddpg(td3())


@register_hparams("ddpg_pendulum")
def ddpg_pendulum() -> HParams:
    """td3_pendulum's settings as DDPG, with 30k steps."""
    return as_ddpg(td3_pendulum()).update(train_steps=30_000)


@register_hparams("ddpg_tiny")
def ddpg_tiny() -> HParams:
    """td3_tiny as DDPG with Ornstein-Uhlenbeck exploration (the paper's): smoke tests."""
    return as_ddpg(td3_tiny()).update(action_function="ornstein_uhlenbeck", memory="uniform")
