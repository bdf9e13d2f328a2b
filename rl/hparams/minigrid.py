"""MiniGrid sets (rl/envs/minigrid.py, docs/observations.md): Dict observations, an encoder per
key. `ppo_minigrid_empty8x8` uses rl-baselines3-zoo's PPO settings for MiniGrid (8 envs x 128
steps, 10 epochs of 64, lr 2.5e-4) with an entropy bonus of 0.01: without one (the zoo's 0), two
of three seeds lost the shortest path they had found (docs/observations.md);
`ppo_minigrid_doorkey` the same on DoorKey-5x5 (pick up the key, open the door, reach the goal);
`ppo_minigrid_tiny` is a smoke test."""

from __future__ import annotations

from rl.hparams.common import rollouts, smoke_test_settings
from rl.hparams.hparams import HParams
from rl.hparams.ppo import ppo, ppo_tiny
from rl.registry import register_hparams


@register_hparams("ppo_minigrid_empty8x8")
def ppo_minigrid_empty8x8() -> HParams:
    """MiniGrid-Empty-8x8: reach the goal square; a return near 0.96 is the shortest path."""
    hp = rollouts(ppo(), num_envs=8, steps_per_env=128, batch_size=64, n_epochs=10)
    hp.update(env="minigrid/Empty-8x8-v0", train_steps=100_000, lr=2.5e-4, ent_coef=0.01)
    hp.eval.update(every_steps=20_480, episodes=20)
    return hp


@register_hparams("ppo_minigrid_doorkey")
def ppo_minigrid_doorkey() -> HParams:
    """MiniGrid-DoorKey-5x5: the zoo's 100k-step budget; a return near 0.96 is a short solution."""
    return ppo_minigrid_empty8x8().update(env="minigrid/DoorKey-5x5-v0")


@register_hparams("ppo_minigrid_tiny")
def ppo_minigrid_tiny() -> HParams:
    """ppo_tiny on MiniGrid-Empty-5x5 (needs minigrid): packed Dict observations end to end."""
    hp = ppo_tiny().update(env="minigrid/Empty-5x5-v0")
    return smoke_test_settings(hp, every=128, log_every=64)
