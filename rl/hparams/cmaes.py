"""CMA-ES hparams sets (Hansen 2016, https://arxiv.org/abs/1604.00772): `num_envs` is the
population size and `lr` the mean's learning rate c_m, per generation (rl/agents/cmaes.py).
"""

from __future__ import annotations

from rl.hparams.common import base, cartpole_protocol, smoke_test_settings
from rl.hparams.hparams import HParams
from rl.registry import register_hparams


@register_hparams("cmaes")
def cmaes() -> HParams:
    """CMA-ES defaults: 16 candidates (env copies), a linear policy, standard c_m = 1."""
    hp = base().update(agent="cmaes", num_envs=16)
    hp.train_every = 128  # 8 vector steps between checks for a finished generation
    hp.update(hidden_sizes=[], activation="tanh", lr=1.0, checkpoint_every=20_000)
    hp.add("cmaes_sigma0", 0.5, "Initial CMA-ES step size around the all-zero weights.")
    return hp.add(
        "cmaes_diagonal",
        False,
        "Separable CMA-ES (diagonal covariance, Ros & Hansen 2008): O(n) per sample for big nets.",
    )


@register_hparams("cmaes_cartpole")
def cmaes_cartpole() -> HParams:
    """CartPole-v1 with a 16-unit tanh layer (114 weights) and 16 candidates per generation."""
    hp = cartpole_protocol(cmaes(), eval_every_steps=5000)
    # checkpoint_every >= 16 envs x 500 steps + 128: whole episodes fit between checkpoints.
    return hp.update(hidden_sizes=[16], train_steps=300_000, checkpoint_every=20_000)


@register_hparams("cmaes_tiny")
def cmaes_tiny() -> HParams:
    """Four candidates on 20-step CartPole episodes with sep-CMA-ES: for smoke tests only."""
    hp = cmaes().update(train_every=16)
    hp.update(env="CartPole-v1", num_envs=4, hidden_sizes=[4], cmaes_diagonal=True, train_steps=480)
    return smoke_test_settings(hp, every=160, log_every=80, max_episode_steps=20)
