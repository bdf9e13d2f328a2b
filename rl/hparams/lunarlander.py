"""LunarLander-v3 hparams sets, from rl-baselines3-zoo's hyperparams/ppo.yml and dqn.yml entries
(commits 208b6fd and ce95481, LunarLander-v2 there: the same dynamics and reward). Both stop at
the "solved" mean return of 200. Measured numbers: docs/benchmarks.md.
"""

from __future__ import annotations

from rl.hparams.common import rollouts
from rl.hparams.dqn import dqn, zoo_small_env_dqn
from rl.hparams.hparams import HParams
from rl.hparams.ppo import ppo
from rl.registry import register_hparams


def _protocol(hp: HParams) -> HParams:
    """LunarLander-v3, evaluated every 10k env steps, stopping at the "solved" mean return."""
    hp.eval.every_steps = 10_000
    return hp.update(env="LunarLander-v3", checkpoint_every=50_000, stop_at_eval_return=200.0)


@register_hparams("ppo_lunarlander")
def ppo_lunarlander() -> HParams:
    """rl-baselines3-zoo's PPO for LunarLander (lr 3e-4: SB3's default)."""
    hp = rollouts(_protocol(ppo()), num_envs=16, steps_per_env=1024, batch_size=64, n_epochs=4)
    return hp.update(train_steps=1_000_000, gamma=0.999, gae_lambda=0.98, ent_coef=0.01)


@register_hparams("dqn_lunarlander")
def dqn_lunarlander() -> HParams:
    """rl-baselines3-zoo's DQN (its Acrobot-v1 settings), epsilon annealed over the zoo's first 12%
    of 100k steps. Double Q stays on (SB3 runs vanilla DQN)."""
    return _protocol(zoo_small_env_dqn(dqn())).update(train_steps=200_000)
