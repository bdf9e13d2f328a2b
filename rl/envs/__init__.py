"""Environments: gymnasium vector envs by name, and the EnvSpec that describes them."""

# Registration side effects: "procgen/coinrun" (procgen itself loads on first use), the
# cooperative "mpe/..." multi-agent tasks (mpe2 loads on first use) and the reward augmentations;
# masked_cartpole registers "MaskedCartPole-v1" (a gymnasium id and an rl env name).
from rl.envs import masked_cartpole, multi_agent, procgen, reward_augmentation  # noqa: F401
from rl.envs import tf as tf_envs  # noqa: F401  (registers the "tf/..." envs)
from rl.envs.factory import check_env_name, make_vector_env
from rl.envs.spec import EnvSpec

__all__ = ["EnvSpec", "check_env_name", "make_vector_env"]
