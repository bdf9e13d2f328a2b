"""PPO hparams sets: Schulman et al. 2017, https://arxiv.org/abs/1707.06347. Learning rate and
clip range are schedules of the *gradient* step: annealing to 0 over `train_steps` env steps is
linear(start, 0, train_steps // rollout * n_epochs * rollout // batch_size)."""

from __future__ import annotations

from rl.hparams.common import cartpole_protocol, rollouts, smoke_test_settings
from rl.hparams.hparams import HParams
from rl.hparams.on_policy import on_policy
from rl.hparams.schedules import Schedule
from rl.registry import register_hparams


@register_hparams("ppo")
def ppo() -> HParams:
    """PPO defaults (Stable-Baselines3's): 2048-step rollouts, 10 epochs of 64-sample batches."""
    hp = on_policy().update(agent="ppo", separate_torsos=True)
    hp.update(lr=3e-4, train_every=2048, batch_size=64, n_epochs=10, gae_lambda=0.95)
    hp.add("clip_range", 0.2, "PPO clip epsilon: a number or a schedule of the gradient step.",
           type=Schedule)  # fmt: skip
    hp.add(
        "clip_range_vf",
        None,
        "Clip the value update to this distance from the old value (None: no clipping);"
        " a number or a schedule of the gradient step.",
        type=Schedule | None,
    )
    return hp.add(
        "target_kl",
        None,
        "Early stop of an update (SB3's rule): before each minibatch's gradient step, the approx "
        "KL mean((r - 1) - log r) of that minibatch (r = pi / pi_rollout, current weights) is "
        "computed in an extra forward pass; above 1.5 * target_kl that step and the rest of the "
        "update's epochs are skipped (train/update_steps counts the steps taken). None: off. "
        "Under a strategy the KL is the whole minibatch's (across replicas and workers); with "
        "--copies on a TF-ops env the seeds then train as separate programs, each stopping on its "
        "own. A number or a schedule of the gradient step.",
        type=Schedule | None,
    )


def zoo_cartpole_ppo(hp: HParams) -> HParams:
    """rl-baselines3-zoo's PPO settings for CartPole-v1, which its RecurrentPPO entry for
    CartPoleNoVel-v1 shares (lr and clip range linear to 0 over 390 updates x 20 gradient steps)."""
    rollouts(hp, num_envs=8, steps_per_env=32, batch_size=256, n_epochs=20)
    hp.update(train_steps=100_000, gamma=0.98, gae_lambda=0.8, ent_coef=0.0)
    return hp.update(lr="linear(1e-3, 0.0, 7800)", clip_range="linear(0.2, 0.0, 7800)")


@register_hparams("ppo_cartpole")
def ppo_cartpole() -> HParams:
    """CartPole-v1 with rl-baselines3-zoo's settings."""
    return cartpole_protocol(zoo_cartpole_ppo(ppo()), eval_every_steps=2560)


@register_hparams("ppo_acrobot")
def ppo_acrobot() -> HParams:
    """Acrobot-v1, rl-baselines3-zoo: 16 envs x 256 steps, 4 epochs, lambda 0.94."""
    hp = rollouts(ppo(), num_envs=16, steps_per_env=256, batch_size=64, n_epochs=4)
    return hp.update(
        env="Acrobot-v1", train_steps=500_000, gae_lambda=0.94, gamma=0.99, ent_coef=0.0
    )


@register_hparams("ppo_tiny")
def ppo_tiny() -> HParams:
    """A few hundred steps with value clipping, separate torsos and schedules: smoke tests."""
    hp = rollouts(ppo(), num_envs=2, steps_per_env=32, batch_size=32, n_epochs=2)
    hp.update(env="CartPole-v1", train_steps=256, hidden_sizes=[16], lr="linear(1e-3, 0.0, 32)")
    hp.update(clip_range="linear(0.2, 0.1, 32)", clip_range_vf=0.2)
    return smoke_test_settings(hp, every=128, log_every=64, max_episode_steps=50)
