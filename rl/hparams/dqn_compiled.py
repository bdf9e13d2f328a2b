"""DQN sets for the compiled path (`rl.compiled.dqn_iteration`): TF-ops envs, one XLA program per
iteration. Env steps are nearly free there, so the gradient steps are the work, hence a 64-64 MLP
(15x fewer FLOPs than dqn_cartpole's 256-256). The campaign `compiled_cartpole` records it beside
SB3's DQN (docs/benchmarks.md)."""

from __future__ import annotations

from rl.hparams.common import smoke_test_settings
from rl.hparams.dqn import dqn_cartpole
from rl.hparams.hparams import HParams
from rl.registry import register_hparams


@register_hparams("dqn_tf_cartpole")
def dqn_tf_cartpole() -> HParams:
    """tf/CartPole-v1 with dqn_cartpole's settings and a 64-64 MLP; stops at eval >= 475."""
    hp = dqn_cartpole().update(env="tf/CartPole-v1", hidden_sizes=[64, 64])
    return hp.update(log_every=256 * 20)  # every 20 iterations: a summary write costs ~1 ms


@register_hparams("dqn_tf_tiny")
def dqn_tf_tiny() -> HParams:
    """A few hundred steps on tf/CartPole-v1, learning from the second iteration: smoke tests."""
    hp = dqn_tf_cartpole().update(stop_at_eval_return=None)
    hp.update(num_envs=4, train_steps=384, train_every=64, gradient_steps=4, buffer_size=256)
    hp.update(batch_size=16, learning_starts=100, target_update_period=8, hidden_sizes=[16])
    return smoke_test_settings(hp, every=128, log_every=64, max_episode_steps=50)
