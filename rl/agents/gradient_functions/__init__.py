"""Pure loss functions (no variables, no optimizer), registered by name."""

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
    "huber",
    "q_learning_target",
    "squared",
    "td_loss",
]
