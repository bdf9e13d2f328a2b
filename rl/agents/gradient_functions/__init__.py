"""Pure loss functions (no variables, no optimizer), registered by name.

Those an hparam chooses declare a role, how an agent calls them (`rl.agents.function_slots`):
- "td_loss": f(q_values [B, A], action [B], td_target [B], weights [B] | None) ->
  (loss, td_error [B]);
- "distributional_loss": f(logits [B, A, N], action [B], target_probs [B, N], weights) ->
  (loss, per-sample loss [B]);
- "quantile_loss": f(quantiles [B, A, N], action [B], target_quantiles [B, N], weights, kappa)
  -> (loss, per-sample loss [B]).
"""

from rl.agents.gradient_functions.actor_critic_continuous import (
    clipped_double_q_target,
    critic_loss,
    deterministic_actor_loss,
    sac_actor_loss,
    sac_alpha_loss,
    smoothed_target_action,
    soft_q_target,
)
from rl.agents.gradient_functions.c51 import (
    categorical_loss,
    categorical_projection,
    categorical_q_values,
    categorical_support,
    categorical_target,
)
from rl.agents.gradient_functions.maddpg import (
    maddpg_actor_loss,
    maddpg_critic_loss,
    maddpg_critic_target,
    maddpg_joint_actions,
)
from rl.agents.gradient_functions.policy_gradient import (
    entropy_bonus,
    masked_mean,
    policy_gradient_loss,
    ppo_clip_loss,
    value_loss,
)
from rl.agents.gradient_functions.qrdqn import (
    quantile_huber_loss,
    quantile_midpoints,
    quantile_q_values,
    quantile_target,
)
from rl.agents.gradient_functions.squashed_gaussian import (
    log_one_minus_tanh_squared,
    squashed_gaussian,
    squashed_gaussian_sample,
)
from rl.agents.gradient_functions.td import (
    double_q_learning_target,
    huber,
    q_learning_target,
    squared,
    td_huber,
    td_mse,
    weighted_td_loss,
)

__all__ = [
    "categorical_loss",
    "categorical_projection",
    "categorical_q_values",
    "categorical_support",
    "categorical_target",
    "clipped_double_q_target",
    "critic_loss",
    "deterministic_actor_loss",
    "log_one_minus_tanh_squared",
    "maddpg_actor_loss",
    "maddpg_critic_loss",
    "maddpg_critic_target",
    "maddpg_joint_actions",
    "sac_actor_loss",
    "sac_alpha_loss",
    "smoothed_target_action",
    "soft_q_target",
    "squashed_gaussian",
    "squashed_gaussian_sample",
    "double_q_learning_target",
    "entropy_bonus",
    "huber",
    "masked_mean",
    "policy_gradient_loss",
    "ppo_clip_loss",
    "q_learning_target",
    "quantile_huber_loss",
    "quantile_midpoints",
    "quantile_q_values",
    "quantile_target",
    "squared",
    "td_huber",
    "td_mse",
    "value_loss",
    "weighted_td_loss",
]
