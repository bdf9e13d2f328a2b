"""QR-DQN hparams sets: the DQN sets with the qrdqn agent and its two keys switched in. Dabney et
al. 2017, https://arxiv.org/abs/1710.10044. `double_q=False` on purpose: the paper's target
picks a* with the target network."""

from __future__ import annotations

from rl.hparams.dqn import dqn, dqn_cartpole, dqn_tiny
from rl.hparams.hparams import HParams
from rl.hparams.schedules import Schedule
from rl.registry import register_hparams


def with_qrdqn(hp: HParams, num_quantiles: int = 200) -> HParams:
    """The qrdqn agent, its loss and its keys (the paper's 200 quantiles, kappa 1)."""
    hp.update(agent="qrdqn", loss="quantile_huber_loss", double_q=False)
    hp.add("num_quantiles", num_quantiles, "QR-DQN: quantiles of each action's return (>= 2).")
    return hp.add(
        "kappa",
        1.0,
        "QR-DQN: Huber threshold of the quantile loss (> 0; the paper's 1); a number or a "
        "schedule of the gradient step.",
        type=Schedule,
    )


@register_hparams("qrdqn")
def qrdqn() -> HParams:
    """QR-DQN with the paper's 200 quantiles and kappa 1 on DQN's defaults."""
    return with_qrdqn(dqn())


@register_hparams("qrdqn_cartpole")
def qrdqn_cartpole() -> HParams:
    """dqn_cartpole's settings with QR-DQN and 50 quantiles."""
    return with_qrdqn(dqn_cartpole(), num_quantiles=50)


@register_hparams("qrdqn_tiny")
def qrdqn_tiny() -> HParams:
    """dqn_tiny (PER, dueling, 3-step) with QR-DQN: for smoke tests, not for learning."""
    return with_qrdqn(dqn_tiny(), num_quantiles=8)
