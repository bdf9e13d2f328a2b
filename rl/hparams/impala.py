"""IMPALA hparams sets: Espeholt et al. 2018, https://arxiv.org/abs/1802.01561 (Table G.1 and
section 5). The unroll length is T = train_every // num_envs (docs/impala.md)."""

from __future__ import annotations

from rl.hparams.common import base, cartpole_protocol, rollouts, smoke_test_settings
from rl.hparams.hparams import HParams
from rl.hparams.on_policy import add_policy_head_keys
from rl.hparams.schedules import Schedule
from rl.registry import register_hparams


@register_hparams("impala")
def impala() -> HParams:
    """The paper's settings where they apply to a small-scale run."""
    hp = base().update(agent="impala", activation="tanh")
    rollouts(hp, num_envs=8, steps_per_env=20)
    hp.update(optimizer="rmsprop", lr=6e-4, adam_epsilon=0.01, max_grad_norm=40.0)
    hp.add(
        "advantage_estimator",
        "vtrace",
        "Registered advantage estimator: vtrace (off-policy corrected), or discounted_returns / "
        "gae (targets as if on-policy; discounted_returns with vtrace_lambda=1 is the paper's "
        "no-correction ablation).",
    )
    hp.add(
        "vtrace_rho_bar",
        1.0,
        "V-trace rho_bar: truncation of the importance weights in delta_t V and in the policy "
        "gradient (None: no truncation); a number or a schedule of the gradient step.",
        type=Schedule | None,
    )
    hp.add(
        "vtrace_c_bar",
        1.0,
        "V-trace c_bar: truncation of the trace coefficients c_t (None: no truncation);"
        " a number or a schedule of the gradient step.",
        type=Schedule | None,
    )
    hp.add(
        "vtrace_lambda",
        1.0,
        "lambda of the traces c_t = lambda min(c_bar, rho_t) (section 4.2 of the paper); also "
        "GAE's lambda with advantage_estimator=gae; a number or a schedule of the gradient step.",
        type=Schedule,
    )
    hp.add("n_epochs", 1, "Passes over each batch of unrolls per update (> 1: off-policy data).")
    hp.add(
        "num_minibatches",
        1,
        "Minibatches per pass, each the whole unrolls of num_envs // num_minibatches env copies.",
    )
    hp.add(
        "normalize_advantage",
        False,
        "Normalize the V-trace advantages to mean 0, std 1 per minibatch (not in the paper).",
    )
    hp.add(
        "vf_coef",
        0.5,
        "Weight of the value loss 0.5 (V - v_s)^2 (the paper's baseline cost): a number or a "
        "schedule of the gradient step.",
        type=Schedule,
    )
    add_policy_head_keys(hp, ent_coef=0.01, separate_torsos=False)
    # --num_workers N: at most one unroll per actor waits for the learner. Deeper queues add
    # policy lag (4 per actor: mean lags of 1.2-4.9 updates and collapsed CartPole runs; 1:
    # 1.1-2.0, docs/impala.md).
    hp.workers.queue_blocks = 1
    return hp


@register_hparams("impala_cartpole")
def impala_cartpole() -> HParams:
    """CartPole-v1: 4 passes of 2 minibatches per batch, so 7 of every 8 gradient steps learn from
    data of an older policy (V-trace corrects). Seeds 0-3 reached 500 at 40-55k env steps; the
    paper's gamma 0.99, lambda 1 and raw advantages took 105k on seed 0."""
    hp = cartpole_protocol(impala(), eval_every_steps=5000)
    rollouts(hp, num_envs=8, steps_per_env=16)
    hp.update(optimizer="adam", lr=1e-3, adam_epsilon=1e-5, max_grad_norm=0.5, gamma=0.98)
    hp.update(vtrace_lambda=0.95, normalize_advantage=True, n_epochs=4, num_minibatches=2)
    return hp.update(ent_coef=0.0, train_steps=200_000)


@register_hparams("impala_tiny")
def impala_tiny() -> HParams:
    """A few hundred CartPole steps with several passes and minibatches: smoke tests."""
    hp = rollouts(impala(), num_envs=4, steps_per_env=8, n_epochs=2)
    hp.update(env="CartPole-v1", train_steps=256, num_minibatches=2, hidden_sizes=[16])
    return smoke_test_settings(hp, every=128, log_every=64, max_episode_steps=50)
