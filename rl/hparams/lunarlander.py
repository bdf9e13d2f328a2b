"""LunarLander-v3 hparams sets: `ppo_lunarlander`, `dqn_lunarlander`.

Starting points are rl-baselines3-zoo's hyperparams/ppo.yml and hyperparams/dqn.yml entries for
LunarLander (read at commits 208b6fd and ce95481, where the env is still called LunarLander-v2;
the v3 env has the same dynamics and reward). The "solved" mean return is 200; both sets stop
there, so the last checkpoint is the solved agent. Measured numbers: docs/benchmarks.md
(benchmarks/algorithm_table.py).
"""

from __future__ import annotations

from rl.hparams.common import rollouts
from rl.hparams.dqn import dqn, zoo_small_env_dqn
from rl.hparams.hparams import HParams
from rl.hparams.ppo import ppo
from rl.registry import register_hparams


def _protocol(hp: HParams) -> HParams:
    """LunarLander-v3, evaluated every 10k env steps, stopping at the "solved" mean return."""
    hp.env = "LunarLander-v3"
    hp.eval.every_steps = 10_000
    hp.checkpoint_every = 50_000
    hp.stop_at_eval_return = 200.0
    return hp


@register_hparams("ppo_lunarlander")
def ppo_lunarlander() -> HParams:
    """rl-baselines3-zoo's PPO: 16 envs x 1024 steps, 4 epochs of 64-sample minibatches,
    gamma 0.999, lambda 0.98, entropy bonus 0.01, lr 3e-4 (SB3's default), 1M env steps."""
    hp = _protocol(ppo())
    rollouts(hp, num_envs=16, steps_per_env=1024, batch_size=64, n_epochs=4)
    hp.train_steps = 1_000_000
    hp.gamma = 0.999
    hp.gae_lambda = 0.98
    hp.ent_coef = 0.01
    return hp


@register_hparams("dqn_lunarlander")
def dqn_lunarlander() -> HParams:
    """rl-baselines3-zoo's DQN (the same settings as its Acrobot-v1 entry): 256-256 MLP, lr 6.3e-4,
    batch 128, 50k replay, learning from the first step, one gradient step per env step (here
    16 per call every 16 steps), target copy every 250 gradient steps, epsilon 1 -> 0.1 over
    the zoo's first 12% of 100k steps. Double Q stays on (SB3 runs vanilla DQN)."""
    hp = _protocol(zoo_small_env_dqn(dqn()))
    hp.train_steps = 200_000
    return hp
