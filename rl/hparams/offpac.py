"""Off-PAC hparams sets: Degris, White & Sutton 2012, https://arxiv.org/abs/1205.4839, with replay
of the agent's own trajectories (rl/agents/offpac.py). A segment is learned from
gradient_steps * batch_size / num_envs times on average."""

from __future__ import annotations

from rl.hparams.common import base, cartpole_protocol, rollouts, smoke_test_settings
from rl.hparams.hparams import HParams
from rl.hparams.on_policy import add_policy_head_keys
from rl.hparams.schedules import Schedule
from rl.registry import register_hparams


@register_hparams("offpac")
def offpac() -> HParams:
    """Off-PAC defaults: replay ratio 8, V-trace truncation at 1, lambda 1."""
    hp = base().update(agent="offpac")
    rollouts(hp, num_envs=8, steps_per_env=16)
    hp.update(lr=7e-4, adam_epsilon=1e-5, max_grad_norm=0.5, activation="tanh")
    hp.add("replay_capacity", 1024, "Replay size in trajectory segments (T steps of one env).")
    hp.add("batch_size", 16, "Replayed segments per gradient step (batch_size * T samples).")
    hp.add("gradient_steps", 4, "Gradient steps per update (one update per train_every steps).")
    hp.add("learning_starts", 0, "Env steps collected before the first update.")
    hp.add(
        "trace_lambda",
        1.0,
        "Trace decay lambda of the critic's off-policy lambda-return (0: one-step TD targets);"
        " a number or a schedule of the gradient step.",
        type=Schedule,
    )
    hp.add(
        "rho_bar",
        1.0,
        "Truncation of the importance weights pi/b in the actor loss and critic target (None: "
        "untruncated, the paper's unbiased weights); a number or a schedule of the gradient step.",
        type=Schedule | None,
    )
    hp.add(
        "c_bar",
        1.0,
        "Truncation of the trace coefficients lambda min(c_bar, pi/b) (None: untruncated);"
        " a number or a schedule of the gradient step.",
        type=Schedule | None,
    )
    hp.add("normalize_advantage", False, "Normalize the actor's advantages per gradient step.")
    hp.add(
        "vf_coef",
        0.5,
        "Weight of the critic loss 0.5 (V - v_s)^2: a number or a schedule of the gradient step.",
        type=Schedule,
    )
    return add_policy_head_keys(hp, ent_coef=0.01, separate_torsos=True)


@register_hparams("offpac_cartpole")
def offpac_cartpole() -> HParams:
    """CartPole-v1; stops once the greedy evaluation reaches 475."""
    return cartpole_protocol(offpac(), eval_every_steps=2560).update(train_steps=100_000)


@register_hparams("offpac_tiny")
def offpac_tiny() -> HParams:
    """A few hundred CartPole steps through every part of the agent: smoke tests."""
    hp = rollouts(offpac(), num_envs=2, steps_per_env=16)
    hp.update(env="CartPole-v1", train_steps=256, replay_capacity=8, batch_size=4, gradient_steps=2)
    hp.update(learning_starts=64, hidden_sizes=[16])
    return smoke_test_settings(hp, every=128, log_every=64, max_episode_steps=50)
