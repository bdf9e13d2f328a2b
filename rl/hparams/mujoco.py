"""MuJoCo locomotion hparams sets: rl-baselines3-zoo's settings for the v4 envs
(hyperparams/{sac,td3,ddpg,ppo}.yml at 22e3ff2) on gymnasium's v5 envs (rl/envs/mujoco.py).
Where every set differs from the zoo:
- SAC, TD3, DDPG: 64 gradient steps every 64 env steps in one compiled call, not 1 every step
  (the same replay ratio; rl/hparams/off_policy_continuous.py).
- SAC: Keras' Glorot initialization, not PyTorch's (TD3 and DDPG take PyTorch's, `torch_init`);
  the campaign `mujoco_300k` compares it with SB3's (docs/benchmarks.md).
- PPO: the zoo's `normalize: true` (VecNormalize) is `normalize_obs` and `normalize_reward`, in the
  agent (rl/models/running_normalizer.py, the same arithmetic); the rollout keeps raw
  observations, normalized with the statistics at update time (VecNormalize stores each step
  normalized with those of its time, which `normalize_obs_at=collection` does). The zoo's
  `ortho_init=False` is `torch_init` (PyTorch's default initialization); vf_coef is twice the
  zoo's, as our value loss is 0.5 (V - R)^2 and SB3's (V - R)^2.
Evaluation is SB3's and the zoo's for MuJoCo: 10 episodes of the deterministic policy (the
Gaussian mean, `eval.sample_actions=False`), every 10k env steps.
"""

from __future__ import annotations

from rl.hparams.common import rollouts, smoke_test_settings
from rl.hparams.ddpg import as_ddpg
from rl.hparams.hparams import HParams
from rl.hparams.off_policy_continuous import smoke_test_replay
from rl.hparams.ppo import ppo
from rl.hparams.sac import sac
from rl.hparams.td3 import td3
from rl.registry import register_hparams


def mujoco_protocol(hp: HParams, env: str) -> HParams:
    """What every MuJoCo set shares: the zoo's 1M env steps and SB3's evaluation protocol."""
    hp.update(env=env, train_steps=1_000_000)
    hp.eval.update(every_steps=10_000, episodes=10, epsilon=0.0, sample_actions=False)
    return hp.update(checkpoint_every=50_000, log_every=5_000)


@register_hparams("sac_halfcheetah")
def sac_halfcheetah() -> HParams:
    """HalfCheetah-v5, the zoo's SAC for all MuJoCo envs: SB3's defaults, 10k random steps first."""
    return mujoco_protocol(sac(), "HalfCheetah-v5").update(learning_starts=10_000)


@register_hparams("sac_hopper")
def sac_hopper() -> HParams:
    """Hopper-v5, sac_halfcheetah's settings (the zoo's)."""
    return mujoco_protocol(sac_halfcheetah(), "Hopper-v5")


@register_hparams("sac_walker2d")
def sac_walker2d() -> HParams:
    """Walker2d-v5, sac_halfcheetah's settings (the zoo's)."""
    return mujoco_protocol(sac_halfcheetah(), "Walker2d-v5")


@register_hparams("sac_ant")
def sac_ant() -> HParams:
    """Ant-v5, sac_halfcheetah's settings (the zoo's)."""
    return mujoco_protocol(sac_halfcheetah(), "Ant-v5")


@register_hparams("td3_halfcheetah")
def td3_halfcheetah() -> HParams:
    """HalfCheetah-v5, the zoo's TD3 for all MuJoCo envs: SB3's defaults, 10k random steps first,
    and SB3's (PyTorch's) initialization, so that init is not one of the differences."""
    hp = mujoco_protocol(td3(), "HalfCheetah-v5")
    return hp.update(learning_starts=10_000, torch_init=True)


@register_hparams("td3_hopper")
def td3_hopper() -> HParams:
    """Hopper-v5, td3_halfcheetah's settings (the zoo's)."""
    return mujoco_protocol(td3_halfcheetah(), "Hopper-v5")


@register_hparams("td3_walker2d")
def td3_walker2d() -> HParams:
    """Walker2d-v5, td3_halfcheetah's settings (the zoo's)."""
    return mujoco_protocol(td3_halfcheetah(), "Walker2d-v5")


@register_hparams("td3_ant")
def td3_ant() -> HParams:
    """Ant-v5, td3_halfcheetah's settings (the zoo's)."""
    return mujoco_protocol(td3_halfcheetah(), "Ant-v5")


@register_hparams("ddpg_halfcheetah")
def ddpg_halfcheetah() -> HParams:
    """HalfCheetah-v5, the zoo's DDPG (its entry is the same as TD3's)."""
    return as_ddpg(td3_halfcheetah())


def mujoco_ppo(env: str) -> HParams:
    """PPO on `env`: the MuJoCo protocol and the zoo's VecNormalize of observations and rewards."""
    return mujoco_protocol(ppo(), env).update(normalize_obs=True, normalize_reward=True)


def zoo_ppo(env: str, *, batch_size: int, n_epochs: int, sb3_vf_coef: float) -> HParams:
    """The zoo's tuned PPO MuJoCo entries (`tuned_policy` adds their `policy_kwargs`)."""
    hp = mujoco_ppo(env)
    rollouts(hp, num_envs=1, steps_per_env=512, batch_size=batch_size, n_epochs=n_epochs)
    return hp.update(vf_coef=2 * sb3_vf_coef)


def tuned_policy(hp: HParams) -> HParams:
    """The zoo's `policy_kwargs` for HalfCheetah and Hopper (`ortho_init=False` is `torch_init`)."""
    return hp.update(hidden_sizes=[256, 256], activation="relu", log_std_init=-2.0, torch_init=True)


@register_hparams("ppo_halfcheetah")
def ppo_halfcheetah() -> HParams:
    """HalfCheetah-v5, the zoo's tuned PPO (differences: the module docstring)."""
    hp = tuned_policy(zoo_ppo("HalfCheetah-v5", batch_size=64, n_epochs=20, sb3_vf_coef=0.58096))
    hp.update(gamma=0.98, gae_lambda=0.92, lr=2.0633e-05, ent_coef=0.000401762, clip_range=0.1)
    return hp.update(max_grad_norm=0.8)


@register_hparams("ppo_hopper")
def ppo_hopper() -> HParams:
    """Hopper-v5, the zoo's tuned PPO (differences: the module docstring)."""
    hp = tuned_policy(zoo_ppo("Hopper-v5", batch_size=32, n_epochs=5, sb3_vf_coef=0.835671))
    hp.update(gamma=0.999, gae_lambda=0.99, lr=9.80828e-05, ent_coef=0.00229519, clip_range=0.2)
    return hp.update(max_grad_norm=0.7)


@register_hparams("ppo_walker2d")
def ppo_walker2d() -> HParams:
    """Walker2d-v5, the zoo's tuned PPO with SB3's default 64-64 tanh networks (differences:
    the module docstring)."""
    hp = zoo_ppo("Walker2d-v5", batch_size=32, n_epochs=20, sb3_vf_coef=0.871923)
    hp.update(gamma=0.99, gae_lambda=0.95, lr=5.05041e-05, ent_coef=0.000585045, clip_range=0.1)
    return hp.update(max_grad_norm=1.0)


@register_hparams("ppo_ant")
def ppo_ant() -> HParams:
    """Ant-v5, the zoo's untuned PPO entry: SB3's defaults (differences: the module docstring)."""
    return mujoco_ppo("Ant-v5").update(vf_coef=2 * 0.5)


@register_hparams("sac_mujoco_tiny")
def sac_mujoco_tiny() -> HParams:
    """sac_halfcheetah for a few hundred steps in 100-step episodes: smoke tests."""
    return smoke_test_replay(sac_halfcheetah()).update(max_episode_steps=100)


@register_hparams("ppo_mujoco_tiny")
def ppo_mujoco_tiny() -> HParams:
    """ppo_hopper for 256 steps in 50-step episodes with 16-unit nets: smoke tests."""
    hp = rollouts(ppo_hopper(), num_envs=2, steps_per_env=32, batch_size=32, n_epochs=2)
    hp.update(train_steps=256, hidden_sizes=[16])
    return smoke_test_settings(hp, every=128, log_every=64, max_episode_steps=50)
