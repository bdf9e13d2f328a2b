"""Goal-conditioned sets with hindsight replay (memory=her, rl/memory/hindsight.py;
docs/goal_conditioned.md).

- `sac_her_fetchreach`: rl-zoo3's SAC + HER entry for FetchReach (its sac.yml): 20k steps, gamma
  0.95, lr 1e-3, batch 256, 64x64 networks, 1,000 warm-up steps, future goals x 4, observations
  normalized (`normalize: true`). One difference: the zoo's VecNormalize also scales rewards;
  these sets keep the sparse -1/0 rewards as they are.
- `td3_her_fetchreach`: the same with TD3 (the zoo has no TD3 entry for FetchReach).
- `dqn_her_bit_flipping`: DQN + HER on the HER paper's bit-flipping task, 12 bits.
- `her_tiny` (DQN, BitFlipping) and `sac_her_tiny` (SAC, FetchReach): smoke tests, not learning.
"""

from __future__ import annotations

from rl.hparams.dqn import dqn, dqn_tiny
from rl.hparams.hparams import HParams
from rl.hparams.sac import sac, sac_tiny
from rl.hparams.td3 import td3
from rl.registry import register_hparams

FETCH_REACH = "FetchReach-v4"
BIT_FLIPPING = "BitFlipping-v0"


def fetch_reach_protocol(hp: HParams) -> HParams:
    """The zoo's FetchReach entry on `hp` (SAC or TD3), evaluated every 2,000 steps on 20
    episodes (success rate: the final step's `is_success`)."""
    hp.update(env=FETCH_REACH, memory="her", her_strategy="future", her_n_sampled_goal=4)
    hp.update(train_steps=20_000, gamma=0.95, lr=1e-3, batch_size=256, learning_starts=1_000)
    hp.update(buffer_size=1_000_000, hidden_sizes=[64, 64], torch_init=True, normalize_obs=True)
    hp.eval.update(every_steps=2_000, episodes=20)
    return hp


@register_hparams("sac_her_fetchreach")
def sac_her_fetchreach() -> HParams:
    """SAC + HER on FetchReach-v4: rl-zoo3's entry (its reward scaling aside)."""
    return fetch_reach_protocol(sac())


@register_hparams("td3_her_fetchreach")
def td3_her_fetchreach() -> HParams:
    """TD3 + HER on FetchReach-v4 with sac_her_fetchreach's settings (the zoo has none for TD3)."""
    return fetch_reach_protocol(td3())


@register_hparams("dqn_her_bit_flipping")
def dqn_her_bit_flipping() -> HParams:
    """DQN + HER on 12-bit BitFlipping: 4,096 states, and a reward of 0 only at the goal."""
    hp = dqn().update(env=BIT_FLIPPING, env_kwargs={"n_bits": 12}, memory="her")
    hp.update(train_steps=10_000, buffer_size=100_000, batch_size=128, learning_starts=1_000)
    hp.update(lr=1e-3, gamma=0.98, hidden_sizes=[256], target_update_period=500)
    hp.update(epsilon="linear(1.0, 0.05, 5000)", train_every=16, gradient_steps=16)
    hp.eval.update(every_steps=1_000, episodes=50)
    return hp


@register_hparams("her_tiny")
def her_tiny() -> HParams:
    """dqn_tiny on 4-bit BitFlipping with memory=her: a few hundred steps through relabelling,
    checkpoints and resume."""
    hp = dqn_tiny().update(env=BIT_FLIPPING, env_kwargs={"n_bits": 4}, memory="her", n_step=1)
    return hp.update(max_episode_steps=None)


@register_hparams("sac_her_tiny")
def sac_her_tiny() -> HParams:
    """sac_tiny on FetchReach-v4 with memory=her (one 50-step episode per 50 steps)."""
    return sac_tiny().update(env=FETCH_REACH, memory="her", max_episode_steps=None)
