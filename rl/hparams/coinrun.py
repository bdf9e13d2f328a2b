"""CoinRun set `ppo_coinrun`: Cobbe et al. 2019, "Leveraging Procedural Generation to Benchmark
Reinforcement Learning" (https://arxiv.org/abs/1912.01588), Table 3 and the "easy" protocol,
scaled down to a CPU: 16 envs instead of 64, 2M steps instead of 25M, and the Nature CNN instead
of the IMPALA ResNet, which this codebase does not register. Training levels are 0..199;
evaluation plays unlimited levels (`eval.env_kwargs`), the paper's test distribution, so the eval
columns of progress.csv are test-level returns and `train_return_mean` training-level.
"""

from __future__ import annotations

from rl.hparams.common import rollouts
from rl.hparams.hparams import HParams
from rl.hparams.ppo import ppo
from rl.registry import register_hparams

TRAIN_STEPS = 2_000_000
NUM_ENVS, STEPS_PER_ENV, MINIBATCHES, EPOCHS = 16, 256, 8, 3


@register_hparams("ppo_coinrun")
def ppo_coinrun() -> HParams:
    """PPO on CoinRun, easy mode, 200 training levels, 2M steps (procgen paper, scaled down)."""
    hp = ppo().update(env="procgen/coinrun", train_steps=TRAIN_STEPS)
    hp.env_kwargs = {"distribution_mode": "easy", "num_levels": 200, "start_level": 0}
    rollout = NUM_ENVS * STEPS_PER_ENV
    rollouts(hp, num_envs=NUM_ENVS, steps_per_env=STEPS_PER_ENV,
             batch_size=rollout // MINIBATCHES, n_epochs=EPOCHS)  # fmt: skip
    gradient_steps = TRAIN_STEPS // rollout * EPOCHS * MINIBATCHES
    hp.lr = f"linear(5e-4, 0.0, {gradient_steps})"
    hp.update(clip_range=f"linear(0.2, 0.0, {gradient_steps})", gamma=0.999, gae_lambda=0.95)
    hp.update(ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5, separate_torsos=False)
    hp.update(hidden_sizes=[256], activation="relu")
    hp.eval.env_kwargs = {"num_levels": 0}  # unlimited levels: almost all unseen in training
    hp.eval.update(every_steps=100_000, episodes=20)
    return hp.update(checkpoint_every=250_000, log_every=rollout)
