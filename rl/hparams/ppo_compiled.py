"""PPO sets for the compiled path (`rl.compiled`): TF-ops envs, one XLA program per iteration.
Env steps are nearly free there, gradient steps are not (docs/architecture.md, "Speed rules"),
so `ppo_tf_cartpole` uses 64 envs and fewer, larger minibatches than `ppo_cartpole`: ~6x fewer
gradient steps per env step than the zoo."""

from __future__ import annotations

from rl.hparams.common import rollouts, smoke_test_settings
from rl.hparams.hparams import HParams
from rl.hparams.ppo import ppo_cartpole
from rl.registry import register_hparams


@register_hparams("ppo_tf_cartpole")
def ppo_tf_cartpole() -> HParams:
    """tf/CartPole-v1: 64 envs x 32 steps, 4 minibatches of 512, 10 epochs."""
    hp = rollouts(ppo_cartpole(), num_envs=64, steps_per_env=32, batch_size=512, n_epochs=10)
    hp.update(env="tf/CartPole-v1", train_steps=200_000, lr="linear(1e-3, 0.0, 3920)")
    hp.update(clip_range="linear(0.2, 0.0, 3920)", checkpoint_every=2048 * 25)
    hp.eval.every_steps = 2048 * 5
    # One TensorBoard point per evaluation: each eager summary write costs ~1 ms, and logging
    # every iteration took ~13% of an 8-seed run's wall time (benchmarks/compiled_seeds.py).
    return hp.update(log_every=2048 * 5)


@register_hparams("ppo_tf_tiny")
def ppo_tf_tiny() -> HParams:
    """A few hundred steps on tf/CartPole-v1 with value clipping and schedules: smoke tests
    (without XLA, as every tiny set; tests/compiled/ and ppo_tf_cartpole's learning test run the
    XLA program)."""
    hp = rollouts(ppo_tf_cartpole(), num_envs=4, steps_per_env=16, batch_size=32, n_epochs=2)
    hp.update(train_steps=256, hidden_sizes=[16], lr="linear(1e-3, 0.0, 32)")
    hp.update(clip_range="linear(0.2, 0.1, 32)", clip_range_vf=0.2, stop_at_eval_return=None)
    return smoke_test_settings(hp, every=128, log_every=64, max_episode_steps=50)
