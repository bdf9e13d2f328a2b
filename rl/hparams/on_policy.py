"""Keys shared by the on-policy policy-gradient families (ppo, a2c, reinforce); not a set."""

from __future__ import annotations

from rl.hparams.common import base
from rl.hparams.hparams import HParams
from rl.hparams.schedules import Schedule


def add_policy_head_keys(hp: HParams, *, ent_coef: float, separate_torsos: bool) -> HParams:
    """Entropy-bonus and network-shape keys of the actor-critics (on-policy, IMPALA, Off-PAC)."""
    hp.add(
        "ent_coef",
        ent_coef,
        "Weight of the entropy bonus in the loss: a number or a schedule of the gradient step.",
        type=Schedule,
    )
    hp.add("separate_torsos", separate_torsos, "Value head with its own torso (shares nothing).")
    return hp.add("log_std_init", 0.0, "Box actions: initial log std of the Gaussian policy.")


def on_policy() -> HParams:
    """Rollout, advantage and loss-weight keys of every policy-gradient agent."""
    hp = base().update(train_every=2048, max_grad_norm=0.5, adam_epsilon=1e-5, activation="tanh")
    hp.add(
        "advantage_estimator",
        "gae",
        "Registered advantage estimator: gae or discounted_returns (train.py --list).",
    )
    hp.add(
        "gae_lambda",
        0.95,
        "GAE lambda (1: n-step returns minus V; 0: one-step TD error); a number or a schedule "
        "of the gradient step.",
        type=Schedule,
    )
    hp.add("n_epochs", 1, "Passes over each rollout per update.")
    hp.add(
        "batch_size",
        2048,
        "Minibatch size in samples; should divide the rollout (train_every // num_envs * "
        "num_envs), else each epoch uses round(rollout / batch_size) equal minibatches.",
    )
    hp.add("normalize_advantage", True, "Normalize advantages to mean 0, std 1 per minibatch.")
    hp.add(
        "vf_coef",
        0.5,
        "Weight of the value loss 0.5 (V - R)^2: a number or a schedule of the gradient step.",
        type=Schedule,
    )
    add_policy_head_keys(hp, ent_coef=0.0, separate_torsos=False)
    hp.add(
        "torch_init",
        False,
        "Initialize every layer as PyTorch's defaults do (Linear: U(+-1/sqrt(fan_in)); "
        "GRU/LSTM: U(+-1/sqrt(units))), i.e. SB3 with ortho_init=False; False: Keras' Glorot "
        "kernels and orthogonal heads (0.01 policy, 1 value).",
    )
    hp.add(
        "normalize_obs",
        False,
        "Standardize observations by running mean/variance of the training envs' observations, "
        "clipped to +-10 (SB3's VecNormalize norm_obs), inside the network.",
    )
    hp.add(
        "normalize_obs_at",
        "update",
        "With normalize_obs: `update` keeps raw observations in the rollout and normalizes them "
        "with the statistics at update time; `collection` stores each normalized with the "
        "statistics of its own step, as VecNormalize hands them to SB3 (Python env path only).",
    )
    return hp.add(
        "normalize_reward",
        False,
        "Divide rewards by the running std of the discounted return, clipped to +-10 (SB3's "
        "VecNormalize norm_reward, with this set's gamma) before they enter the rollout.",
    )
