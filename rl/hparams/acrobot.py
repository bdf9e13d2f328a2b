"""Acrobot-v1 sets beyond the family modules' (`dqn_acrobot` is in dqn.py, `ppo_acrobot` in
ppo.py): `a2c_acrobot`. Acrobot-v1 counts as solved at a mean return of -100."""

from __future__ import annotations

from rl.hparams.a2c import a2c
from rl.hparams.hparams import HParams
from rl.registry import register_hparams


@register_hparams("a2c_acrobot")
def a2c_acrobot() -> HParams:
    """rl-baselines3-zoo's A2C rollouts for Acrobot-v1 (hyperparams/a2c.yml at c6c209e: 16 envs x
    5 steps, ent_coef 0, 500k env steps) with a2c_cartpole's Adam at 1e-3 instead of SB3's
    RMSprop at 7e-4 (see a2c_cartpole), and without the zoo's observation/reward normalization
    (VecNormalize), which this codebase does not have."""
    hp = a2c()
    hp.env = "Acrobot-v1"
    hp.num_envs = 16
    hp.optimizer = "adam"
    hp.lr = 1e-3
    hp.train_steps = 500_000
    hp.train_every = 80
    hp.batch_size = 80
    hp.eval.every_steps = 5000
    hp.checkpoint_every = 50_000
    hp.stop_at_eval_return = -100.0
    return hp
