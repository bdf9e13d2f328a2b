"""The rest of the DQN family as configurations of the DQN sets: NoisyNet DQN (Fortunato et al.
2017, https://arxiv.org/abs/1706.10295), C51 (Bellemare et al. 2017,
https://arxiv.org/abs/1707.06887) and Rainbow (Hessel et al. 2017,
https://arxiv.org/abs/1710.02298).
"""

from __future__ import annotations

from rl.hparams.dqn import dqn, dqn_cartpole, dqn_tiny
from rl.hparams.hparams import HParams
from rl.registry import register_hparams


def with_noisy_nets(hp: HParams) -> HParams:
    """NoisyNet exploration instead of epsilon-greedy."""
    return hp.update(noisy=True, epsilon=0.0)


def with_c51(hp: HParams, v_min: float = -10.0, v_max: float = 10.0) -> HParams:
    """The c51 agent, its loss and support keys (by default the paper's 51 atoms on [-10, 10])."""
    hp.update(agent="c51", loss="categorical_loss")
    hp.add("num_atoms", 51, "C51: atoms of each action's return distribution (>= 2).")
    hp.add("v_min", v_min, "C51: smallest return of the support; returns below are clipped.")
    return hp.add("v_max", v_max, "C51: largest return of the support; returns beyond are clipped.")


def with_rainbow(hp: HParams, v_min: float = -10.0, v_max: float = 10.0) -> HParams:
    """Every Rainbow component; alpha 0.5 and 3-step returns as in the paper's Table 1."""
    hp = with_noisy_nets(with_c51(hp, v_min, v_max))
    return hp.update(double_q=True, dueling=True, memory="prioritized", per_alpha=0.5, n_step=3)


@register_hparams("noisy_dqn")
def noisy_dqn() -> HParams:
    """DQN's defaults with NoisyNet heads and no epsilon-greedy."""
    return with_noisy_nets(dqn())


@register_hparams("noisy_dqn_cartpole")
def noisy_dqn_cartpole() -> HParams:
    """dqn_cartpole with NoisyNet heads instead of epsilon-greedy."""
    return with_noisy_nets(dqn_cartpole())


@register_hparams("noisy_dqn_tiny")
def noisy_dqn_tiny() -> HParams:
    """dqn_tiny with NoisyNet heads: for smoke tests, not for learning."""
    return with_noisy_nets(dqn_tiny())


@register_hparams("c51")
def c51() -> HParams:
    """C51 with the paper's support (51 atoms on [-10, 10]) on DQN's defaults."""
    return with_c51(dqn())


@register_hparams("c51_cartpole")
def c51_cartpole() -> HParams:
    """dqn_cartpole's settings with C51; CartPole's discounted returns lie in [0, 100]."""
    return with_c51(dqn_cartpole(), v_min=0.0, v_max=100.0)


@register_hparams("c51_tiny")
def c51_tiny() -> HParams:
    """dqn_tiny with C51 (PER, dueling, 3-step are on in dqn_tiny): for smoke tests."""
    return with_c51(dqn_tiny(), v_min=0.0, v_max=100.0)


@register_hparams("rainbow")
def rainbow() -> HParams:
    """Rainbow's components on DQN's defaults (the paper's Atari support [-10, 10])."""
    return with_rainbow(dqn())


@register_hparams("rainbow_cartpole")
def rainbow_cartpole() -> HParams:
    """Rainbow on CartPole-v1 with dqn_cartpole's cadence; support [0, 100]."""
    return with_rainbow(dqn_cartpole(), v_min=0.0, v_max=100.0)


@register_hparams("rainbow_tiny")
def rainbow_tiny() -> HParams:
    """dqn_tiny with every Rainbow component: for smoke tests, not for learning."""
    return with_rainbow(dqn_tiny(), v_min=0.0, v_max=100.0)
