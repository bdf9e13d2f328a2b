"""TD3 hparams sets: Fujimoto et al. 2018, "Addressing Function Approximation Error in
Actor-Critic Methods", https://arxiv.org/abs/1802.09477. ddpg.py switches its tricks off."""

from __future__ import annotations

from rl.hparams.hparams import HParams
from rl.hparams.off_policy_continuous import (
    add_torch_init_key,
    off_policy_continuous,
    pendulum_protocol,
    smoke_test_replay,
)
from rl.hparams.schedules import Schedule
from rl.registry import register_hparams


@register_hparams("td3")
def td3() -> HParams:
    """TD3 defaults (the paper's and SB3's): policy delay 2, smoothing noise 0.2 clipped at 0.5."""
    hp = off_policy_continuous().update(agent="td3", lr=1e-3, hidden_sizes=[400, 300])
    add_torch_init_key(hp)
    hp.add("policy_delay", 2, "Critic steps per actor (and target) update.")
    hp.add(
        "target_policy_noise",
        0.2,
        "Std of the target-action smoothing noise, in units of the action half-range (0: off); "
        "a number or a schedule of the gradient step.",
        type=Schedule,
    )
    hp.add(
        "target_noise_clip",
        0.5,
        "Smoothing-noise clip in half-range units; a number or a schedule of the gradient step.",
        type=Schedule,
    )
    hp.add(
        "action_function",
        "gaussian_noise",
        "Registered exploration-noise action function (train.py --list): gaussian_noise (role "
        "action_noise) or ornstein_uhlenbeck (role stateful_action_noise).",
    )
    hp.add(
        "action_noise_std",
        0.1,
        "Action noise std (OU: sigma) in half-range units; a number or a schedule of the env step.",
        type=Schedule,
    )
    return hp.add(
        "ou_theta",
        0.15,
        "OU mean-reversion rate theta (dt = 1); a number or a schedule of the env step.",
        type=Schedule,
    )


@register_hparams("td3_pendulum")
def td3_pendulum() -> HParams:
    """Pendulum-v1, close to rl-baselines3-zoo (gamma 0.98, lr 1e-3, noise 0.1), smaller nets."""
    return pendulum_protocol(td3()).update(gamma=0.98, hidden_sizes=[256, 256])


@register_hparams("td3_tiny")
def td3_tiny() -> HParams:
    """A few hundred Pendulum steps with prioritized replay: smoke tests, not learning."""
    return smoke_test_replay(td3()).update(env="Pendulum-v1", max_episode_steps=100)
