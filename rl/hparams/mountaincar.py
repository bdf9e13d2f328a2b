"""MountainCar-v0 hparams sets: `dqn_mountaincar` (DQN with potential-based energy shaping)."""

from __future__ import annotations

from rl.hparams.common import replay_ratio, replay_sizes
from rl.hparams.dqn import dqn
from rl.hparams.hparams import HParams
from rl.registry import register_hparams


@register_hparams("dqn_mountaincar")
def dqn_mountaincar() -> HParams:
    """MountainCar-v0: DQN with energy shaping, stopping at the "solved" mean return of -110.

    The reward is -1 per step until the flag, so epsilon-greedy exploration rarely finds the
    goal early; `mountain_car_energy` adds gamma * phi(s') - phi(s) with phi the car's
    mechanical energy, which keeps the optimal policy (Ng et al. 1999) and rewards pumping from
    the first episode. Evaluation reports the true return (docs/environments.md).

    Measured on the dev machine (2026-11-21; greedy eval of 10 episodes every 2.5k env steps):
    - rl-baselines3-zoo's DQN settings (lr 4e-3, gamma 0.98, 10k replay, target every 600 env
      steps, 1-step returns) plus the shaping: seed 0 reached -105.5 at 60k env steps; seed 1
      was still at -116 after 75k, dropping to -200 on the way. Shaping alone was not enough.
    - These settings (lr 1e-3, gamma 0.99, 3-step returns, 50k replay, target update every 250
      gradient steps = 500 env steps, epsilon annealed over 20k steps): seeds 0-3 stopped at
      40.0k, 40.0k, 47.5k and 37.5k env steps (eval -104.6, -106.1, -109.5, -102.5); 100 test
      episodes of those checkpoints: -111.3, -105.8, -110.0, -104.2.
    - The same without shaping: seeds 0 and 1 at 65.0k and 52.5k env steps.
    """
    hp = dqn()
    hp.env = "MountainCar-v0"
    hp.reward_augmentation = "mountain_car_energy"
    hp.reward_augmentation_kwargs = {"scale": 10.0}
    hp.train_steps = 120_000
    hp.gamma = 0.99
    hp.n_step = 3
    hp.lr = 1e-3
    replay_sizes(hp, buffer_size=50_000, batch_size=128, learning_starts=1000)
    replay_ratio(hp, train_every=16, gradient_steps=8)
    hp.target_update_period = 250
    hp.epsilon = "linear(1.0, 0.05, 20000)"
    hp.hidden_sizes = [256, 256]
    hp.eval.every_steps = 2500
    hp.stop_at_eval_return = -110.0
    return hp
