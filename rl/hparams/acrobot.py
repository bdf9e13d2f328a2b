"""Acrobot-v1 sets beyond the family modules' (`dqn_acrobot` is in dqn.py, `ppo_acrobot` in
ppo.py): `a2c_acrobot`. Acrobot-v1 counts as solved at a mean return of -100."""

from __future__ import annotations

from rl.hparams.a2c import a2c
from rl.hparams.common import rollouts
from rl.hparams.hparams import HParams
from rl.registry import register_hparams


@register_hparams("a2c_acrobot")
def a2c_acrobot() -> HParams:
    """rl-baselines3-zoo's A2C for Acrobot-v1 (hyperparams/a2c.yml at c6c209e), without its
    VecNormalize. The campaign `classic_control` records it beside SB3's (docs/benchmarks.md)."""
    hp = rollouts(a2c(), num_envs=16, steps_per_env=5, batch_size=80)
    hp.update(env="Acrobot-v1", train_steps=500_000)
    hp.eval.every_steps = 5000
    return hp.update(checkpoint_every=50_000, stop_at_eval_return=-100.0)
