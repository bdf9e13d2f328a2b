"""Pure loss functions (no variables, no optimizer), registered by name."""

from rl.agents.gradient_functions.policy_gradient import (
    entropy_bonus,
    masked_mean,
    policy_gradient_loss,
    ppo_clip_loss,
    value_loss,
)
from rl.agents.gradient_functions.td import (
    ELEMENTWISE_LOSSES,
    double_q_learning_target,
    huber,
    q_learning_target,
    squared,
    td_loss,
)

__all__ = [
    "ELEMENTWISE_LOSSES",
    "double_q_learning_target",
    "entropy_bonus",
    "huber",
    "masked_mean",
    "policy_gradient_loss",
    "ppo_clip_loss",
    "q_learning_target",
    "squared",
    "td_loss",
    "value_loss",
]
