"""A2C hparams sets: Mnih et al. 2016, "Asynchronous Methods for Deep Reinforcement Learning",
https://arxiv.org/abs/1602.01783, in the synchronous variant OpenAI baselines and SB3 run."""

from __future__ import annotations

from rl.hparams.common import cartpole_protocol, rollouts, smoke_test_settings
from rl.hparams.hparams import HParams
from rl.hparams.on_policy import on_policy
from rl.registry import register_hparams


@register_hparams("a2c")
def a2c() -> HParams:
    """A2C as Stable-Baselines3 runs it by default (torch's RMSprop, separate orthogonal-init MLPs).
    vf_coef is 1.0 because our value loss is 0.5 (V - R)^2 and SB3's vf_coef 0.5 * MSE: the same
    term (tests/agents/test_a2c_sb3_settings.py checks the networks, optimizer and loss weights)."""
    hp = on_policy().update(agent="a2c", train_every=5, batch_size=5, n_epochs=1, gae_lambda=1.0)
    hp.update(normalize_advantage=False, optimizer="rmsprop_torch", lr=7e-4, vf_coef=1.0)
    hp.update(ent_coef=0.0, separate_torsos=True)
    return hp.add(
        "orthogonal_init",
        True,
        "Orthogonal torso kernels with gain sqrt(2) and zero biases (SB3's ortho_init); "
        "False: Keras' Glorot uniform. The heads are orthogonal either way (gains 0.01, 1).",
    )


@register_hparams("a2c_cartpole")
def a2c_cartpole() -> HParams:
    """CartPole-v1 with rl-baselines3-zoo's settings (8 envs x 5 steps, otherwise `a2c`). Seeds
    0/1/2 first evaluated >= 475 at 25k/55k/45k env steps (SB3 2.x, same protocol: 50k/10k/15k)."""
    hp = cartpole_protocol(a2c(), eval_every_steps=5000).update(train_steps=300_000)
    return rollouts(hp, num_envs=8, steps_per_env=5, batch_size=40)


@register_hparams("a2c_tiny")
def a2c_tiny() -> HParams:
    """A few hundred Pendulum steps (Gaussian policy, Box actions): smoke tests."""
    hp = rollouts(a2c(), num_envs=2, steps_per_env=10, batch_size=20)
    hp.update(env="Pendulum-v1", train_steps=200, gae_lambda=0.9, hidden_sizes=[16], ent_coef=0.01)
    return smoke_test_settings(hp, every=100, log_every=40, max_episode_steps=50)
