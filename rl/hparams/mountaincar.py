"""MountainCar-v0 hparams sets: `dqn_mountaincar` (DQN with potential-based energy shaping)."""

from __future__ import annotations

from rl.hparams.dqn import dqn
from rl.hparams.hparams import HParams
from rl.registry import register_hparams


@register_hparams("dqn_mountaincar")
def dqn_mountaincar() -> HParams:
    """MountainCar-v0: DQN with energy shaping, stopping at the "solved" mean return of -110.

    The reward is -1 per step until the flag, so epsilon-greedy exploration rarely finds the goal;
    `mountain_car_energy` adds gamma * phi(s') - phi(s) with phi the car's mechanical energy, which
    keeps the optimal policy (Ng et al. 1999) and rewards pumping from the first episode. Evaluation
    reports the true return."""
    hp = dqn().update(env="MountainCar-v0", reward_augmentation="mountain_car_energy")
    hp.update(reward_augmentation_kwargs={"scale": 10.0}, train_steps=120_000, gamma=0.99, n_step=3)
    hp.update(lr=1e-3, buffer_size=50_000, batch_size=128, learning_starts=1000, train_every=16)
    hp.update(gradient_steps=8, target_update_period=250, epsilon="linear(1.0, 0.05, 20000)")
    hp.eval.every_steps = 2500
    return hp.update(hidden_sizes=[256, 256], stop_at_eval_return=-110.0)
