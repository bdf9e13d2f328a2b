"""DQN hparams sets: `dqn` (defaults), `dqn_cartpole`, `dqn_acrobot`, `dqn_tiny` (tests)."""

from __future__ import annotations

from rl.hparams.common import (
    add_prioritized_replay_keys,
    add_replay_keys,
    base,
    cartpole_protocol,
    smoke_test_settings,
)
from rl.hparams.hparams import HParams
from rl.hparams.schedules import Schedule
from rl.registry import register_hparams


def add_q_learning_keys(hp: HParams, *, target_update_period: int) -> HParams:
    """Update, target-network and exploration keys the DQN family and DRQN share."""
    hp.add("gradient_steps", 1, "Gradient steps per update call (run as one compiled call).")
    hp.add("target_update_period", target_update_period, "Gradient steps between target updates.")
    hp.add(
        "tau",
        1.0,
        "Target update rate (1: copy, < 1: Polyak); a number or a schedule of the gradient step.",
        type=Schedule,
    )
    hp.add(
        "epsilon",
        "linear(1.0, 0.05, 10000)",
        "Exploration rate as a schedule of the env step.",
        type=Schedule,
    )
    hp.add(
        "action_function",
        "epsilon_greedy",
        "Registered action function, role q_exploration (train.py --list): epsilon_greedy.",
    )
    hp.add("double_q", True, "Double Q-learning target (van Hasselt et al. 2015).")
    return hp.add("dueling", False, "Dueling value/advantage head (Wang et al. 2016).")


def zoo_small_env_dqn(hp: HParams) -> HParams:
    """rl-baselines3-zoo's DQN entry for Acrobot-v1 (and, the same, LunarLander), its one gradient
    step per env step done as 16 per call every 16 steps."""
    hp.update(lr=6.3e-4, buffer_size=50_000, batch_size=128, learning_starts=0)
    hp.update(train_every=16, gradient_steps=16, target_update_period=250)
    return hp.update(epsilon="linear(1.0, 0.1, 12000)", hidden_sizes=[256, 256])


@register_hparams("dqn")
def dqn() -> HParams:
    """DQN defaults (Nature-DQN style, with double Q on); sets for an env start from here."""
    hp = base().update(agent="dqn")
    add_replay_keys(hp, buffer_size=100_000, batch_size=64, learning_starts=1000)
    add_q_learning_keys(hp, target_update_period=1000)
    hp.add("noisy", False, "NoisyNet head: learned factorised Gaussian noise (Fortunato 2017).")
    hp.add("noisy_sigma0", 0.5, "NoisyNet: initial noise scale sigma0 (sigma = sigma0/sqrt(p)).")
    hp.add("n_step", 1, "Multi-step returns over this many steps.")
    hp.add(
        "loss",
        "td_huber",
        "Registered loss the agent minimises (train.py --list): td_huber or td_mse "
        "(0.5 error^2) for dqn (role td_loss), categorical_loss for c51 (distributional_loss), "
        "quantile_huber_loss for qrdqn (quantile_loss).",
    )
    return add_prioritized_replay_keys(hp)


@register_hparams("dqn_cartpole")
def dqn_cartpole() -> HParams:
    """CartPole-v1 with the rl-baselines3-zoo cadence, on two env copies instead of one, which halve
    the compiled acting calls (the campaign `classic_control` compares it with SB3's DQN)."""
    hp = cartpole_protocol(dqn(), eval_every_steps=5000)
    hp.update(num_envs=2, train_steps=50_000, lr=2.3e-3, buffer_size=100_000, batch_size=64)
    hp.update(learning_starts=1000, train_every=256, gradient_steps=128, target_update_period=128)
    return hp.update(
        epsilon="linear(1.0, 0.04, 8000)", hidden_sizes=[256, 256], checkpoint_every=10_000
    )


@register_hparams("dqn_acrobot")
def dqn_acrobot() -> HParams:
    """Acrobot-v1 (rl-baselines3-zoo settings); solved at a mean return of about -100."""
    return zoo_small_env_dqn(dqn()).update(env="Acrobot-v1", train_steps=100_000)


@register_hparams("dqn_tiny")
def dqn_tiny() -> HParams:
    """A few hundred steps with every DQN switch on: for smoke tests, not for learning."""
    hp = dqn().update(env="CartPole-v1", train_steps=600, buffer_size=1000, batch_size=16)
    hp.update(learning_starts=100, train_every=50, gradient_steps=4, target_update_period=8)
    hp.update(hidden_sizes=[16], memory="prioritized", dueling=True, n_step=3)
    return smoke_test_settings(hp, every=300, log_every=100, max_episode_steps=100)
