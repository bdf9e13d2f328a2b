"""SAC hparams sets: Haarnoja et al. 2018, https://arxiv.org/abs/1801.01290 and
https://arxiv.org/abs/1812.05905 (automatic entropy tuning)."""

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


@register_hparams("sac")
def sac() -> HParams:
    """SAC defaults (SB3's): lr 3e-4, 256x256 nets, learned alpha starting at 1."""
    hp = add_torch_init_key(off_policy_continuous()).update(agent="sac")
    hp.add("auto_alpha", True, "Learn the temperature alpha (else keep alpha_init).")
    hp.add("alpha_init", 1.0, "Initial (or fixed) entropy temperature alpha.")
    return hp.add(
        "target_entropy",
        None,
        "Entropy the learned alpha aims for (None: -|A|, the number of action dimensions);"
        " a number or a schedule of the gradient step.",
        type=Schedule | None,
    )


@register_hparams("sac_pendulum")
def sac_pendulum() -> HParams:
    """Pendulum-v1 with rl-baselines3-zoo's one change to the defaults: lr 1e-3."""
    return pendulum_protocol(sac()).update(lr=1e-3)


@register_hparams("sac_tiny")
def sac_tiny() -> HParams:
    """A few hundred Pendulum steps with prioritized replay: smoke tests, not learning."""
    return smoke_test_replay(sac()).update(env="Pendulum-v1", max_episode_steps=100)
