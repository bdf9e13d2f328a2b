"""The registered search spaces of `python -m rl.tune` (`--space NAME`, `train.py --list`).

Ranges follow what rl-baselines3-zoo samples for the same algorithms (its `hyperparams_opt.py`),
narrowed to values that fit the sets they tune: batch sizes divide the rollouts of the
CartPole sets, and the schedules are offered as choices rather than as free-form text.
"""

from __future__ import annotations

from rl.registry import register_search_space
from rl.tune.search_space import Param, SearchSpace

PPO = register_search_space(
    "ppo",
    SearchSpace(
        "ppo",
        "PPO: learning rate, clip range, entropy and value weights, discount, GAE lambda, "
        "epochs and batch size (a constant lr; the zoo's linear-to-0 lr is a choice of lr_decay "
        "in no set yet, so it is left out)",
        (
            Param("lr", "float", 1e-4, 3e-3, log=True),
            Param("clip_range", "categorical", choices=(0.1, 0.2, 0.3)),
            Param("ent_coef", "float", 1e-8, 1e-2, log=True),
            Param("vf_coef", "float", 0.2, 1.0),
            Param("gamma", "categorical", choices=(0.95, 0.98, 0.99, 0.995)),
            Param("gae_lambda", "categorical", choices=(0.8, 0.9, 0.95, 0.98)),
            Param("n_epochs", "categorical", choices=(5, 10, 20)),
            Param("batch_size", "categorical", choices=(32, 64, 128)),
            Param("max_grad_norm", "categorical", choices=(0.5, 1.0, 5.0)),
        ),
    ),
)

# Exploration schedules the DQN space offers.
EPSILONS = ("linear(1.0, 0.05, 4000)", "linear(1.0, 0.04, 8000)", "linear(1.0, 0.02, 16000)")
DQN = register_search_space(
    "dqn",
    SearchSpace(
        "dqn",
        "DQN: learning rate, batch size, target period, exploration schedule, gradient steps "
        "per update, discount and network width",
        (
            Param("lr", "float", 1e-4, 3e-3, log=True),
            Param("batch_size", "categorical", choices=(32, 64, 128)),
            Param("target_update_period", "categorical", choices=(8, 64, 128, 500)),
            Param("epsilon", "categorical", choices=EPSILONS),
            Param("gradient_steps", "categorical", choices=(4, 64, 128)),
            Param("gamma", "categorical", choices=(0.98, 0.99, 0.995)),
            Param("hidden_sizes", "categorical", choices=("[64, 64]", "[256, 256]")),
        ),
    ),
)
