"""Recurrent-policy hparams sets: recurrent PPO and DRQN, and feed-forward PPO to compare with
(docs/recurrent.md). `MaskedCartPole-v1` (rl/envs/masked_cartpole.py) is CartPole-v1 without the
two velocities: a feed-forward policy sees too little to balance the pole, a recurrent one infers
the velocities.
"""

from __future__ import annotations

from rl.hparams.common import (
    add_prioritized_replay_keys,
    base,
    cartpole_protocol,
    rollouts,
    smoke_test_settings,
)
from rl.hparams.dqn import add_q_learning_keys
from rl.hparams.hparams import HParams
from rl.hparams.ppo import ppo, ppo_cartpole, zoo_cartpole_ppo
from rl.hparams.schedules import Schedule
from rl.registry import register_hparams

MASKED_CARTPOLE = "MaskedCartPole-v1"


def _add_recurrent_core(hp: HParams) -> HParams:
    """The two keys of the recurrent core (rl/models/recurrent.py)."""
    hp.add("recurrent_cell", "gru", "Recurrent core between torso and heads: gru or lstm.")
    return hp.add(
        "recurrent_units", 64, "Units of the recurrent core (an LSTM's state is twice that)."
    )


@register_hparams("ppo_recurrent")
def ppo_recurrent() -> HParams:
    """PPO with a torso -> GRU -> heads actor-critic, learning on 128-step env sequences.
    `separate_torsos` gives the value head its own torso AND core, as SB3-contrib does: on
    MaskedCartPole-v1 a shared core stayed below 150 for seeds 1-3 in 100k env steps, separate cores
    reached 360-500 for seeds 0-2 (docs/recurrent.md)."""
    hp = _add_recurrent_core(ppo()).update(agent="ppo_recurrent")
    rollouts(hp, num_envs=8, steps_per_env=128, batch_size=256, n_epochs=4)
    hp.add(
        "sequence_length",
        None,
        "Steps per training sequence: each env's rollout chunk (train_every // num_envs steps) "
        "is cut into sequences of this length that start from their acting-time state "
        "(None: the whole chunk). batch_size // sequence_length sequences make a minibatch.",
        type=int | None,
    )
    return hp.add(
        "recurrent_core_first",
        False,
        "Run the recurrent core on the observation and the MLP torso (hidden_sizes) on its output, "
        "as SB3-contrib's MlpLstmPolicy (LSTM, then net_arch); False: torso -> core -> heads.",
    )


@register_hparams("ppo_recurrent_masked_cartpole")
def ppo_recurrent_masked_cartpole() -> HParams:
    """MaskedCartPole-v1 with rl-baselines3-zoo's RecurrentPPO settings for CartPoleNoVel-v1
    (hyperparams/ppo_lstm.yml, "Tuned") and SB3-contrib's MlpLstmPolicy with `ortho_init=False,
    activation_fn=nn.ReLU, lstm_hidden_size=64, enable_critic_lstm=True, net_arch=dict(pi=[64],
    vf=[64])` and `normalize: True`; SB3's vf_coef 0.5 on mean((R - V)^2) is our 1.0. Seeds 0-5
    evaluate 500 within 10k-23k env steps (docs/recurrent.md)."""
    hp = cartpole_protocol(
        zoo_cartpole_ppo(ppo_recurrent()), eval_every_steps=2560, env=MASKED_CARTPOLE
    )
    hp.update(vf_coef=1.0, recurrent_cell="lstm", recurrent_units=64, recurrent_core_first=True)
    hp.update(torch_init=True, normalize_obs=True, normalize_reward=True, hidden_sizes=[64])
    return hp.update(activation="relu")


@register_hparams("ppo_masked_cartpole")
def ppo_masked_cartpole() -> HParams:
    """Feed-forward PPO (ppo_cartpole's settings) on MaskedCartPole-v1: the baseline the
    recurrent agents are compared with; it cannot see the velocities and stays far below."""
    return ppo_cartpole().update(env=MASKED_CARTPOLE)


@register_hparams("ppo_recurrent_tiny")
def ppo_recurrent_tiny() -> HParams:
    """A few hundred steps with an LSTM core, a time limit that cuts episodes inside sequences, and
    ppo_recurrent_masked_cartpole's SB3-contrib options: smoke and resume tests."""
    hp = rollouts(ppo_recurrent(), num_envs=2, steps_per_env=32, batch_size=32, n_epochs=2)
    hp.update(env=MASKED_CARTPOLE, recurrent_cell="lstm", recurrent_core_first=True)
    hp.update(torch_init=True, normalize_obs=True, normalize_reward=True, recurrent_units=8)
    hp.update(hidden_sizes=[16], train_steps=256, sequence_length=16, lr="linear(1e-3, 0.0, 16)")
    return smoke_test_settings(hp, every=128, log_every=64, max_episode_steps=20)


@register_hparams("drqn")
def drqn() -> HParams:
    """DRQN defaults, with R2D2-style sequence replay (stored state, burn-in)."""
    hp = _add_recurrent_core(base()).update(agent="drqn")
    hp.add("memory", "uniform", "Sequence replay: uniform or prioritized (R2D2's priorities).")
    hp.add("buffer_size", 5000, "Replay capacity in SEQUENCES of burn_in + sequence_length steps.")
    hp.add("sequence_length", 20, "Steps learned from in each replayed sequence (R2D2's m).")
    hp.add(
        "burn_in",
        10,
        "Steps of the same episode before each sequence, replayed from the stored state only "
        "to refresh it (no loss, no gradient; R2D2's l).",
    )
    hp.add("batch_size", 32, "Sequences per gradient step.")
    hp.add("learning_starts", 1000, "Uniformly random env steps before learning.")
    add_q_learning_keys(hp, target_update_period=500)
    hp.add("n_step", 1, "n-step returns within each sequence (shorter near its end).")
    hp.add(
        "loss",
        "td_huber",
        "Registered gradient function of the TD error, role td_loss (train.py --list): "
        "td_huber or td_mse (0.5 error^2).",
    )
    add_prioritized_replay_keys(hp)
    hp.per_alpha, hp.per_beta = 0.9, 0.6  # R2D2's
    hp.add(
        "priority_eta",
        0.9,
        "Prioritized replay: a sequence's priority is eta * max |TD error| + (1 - eta) * mean;"
        " a number or a schedule of the gradient step.",
        type=Schedule,
    )
    return hp.update(train_every=16)


@register_hparams("drqn_masked_cartpole")
def drqn_masked_cartpole() -> HParams:
    """MaskedCartPole-v1, tuned on seed 0 (docs/recurrent.md): a target period of 200 or one-step
    returns learned more slowly; lr 5e-4 peaked lower. Evaluations are noisy (DQN-style)."""
    hp = cartpole_protocol(drqn(), eval_every_steps=2560, env=MASKED_CARTPOLE)
    rollouts(hp, num_envs=4, steps_per_env=16)
    hp.update(train_steps=150_000, gradient_steps=8, batch_size=32, hidden_sizes=[64], lr=1e-3)
    hp.update(n_step=3, learning_starts=2000, target_update_period=500)
    return hp.update(epsilon="linear(1.0, 0.02, 20000)")


@register_hparams("drqn_tiny")
def drqn_tiny() -> HParams:
    """A few hundred steps with an LSTM core, prioritized sequences, dueling head, 3-step returns
    and a time limit that ends episodes mid-sequence: smoke tests."""
    hp = rollouts(drqn(), num_envs=2, steps_per_env=25)
    hp.update(env=MASKED_CARTPOLE, recurrent_cell="lstm", recurrent_units=8)
    hp.update(hidden_sizes=[16], train_steps=400, gradient_steps=2, buffer_size=100, batch_size=4)
    hp.update(learning_starts=100, sequence_length=6, burn_in=3, target_update_period=4)
    hp.update(memory="prioritized", dueling=True, n_step=3)
    return smoke_test_settings(hp, every=200, log_every=100, max_episode_steps=30)
