"""Environments: gymnasium vector envs by name, and the EnvSpec that describes them."""

# Registration side effects: "procgen/coinrun" (procgen itself loads on first use), the
# cooperative "mpe/..." multi-agent tasks (mpe2 loads on first use), the "minigrid/..." tasks
# (minigrid loads on first use) and the reward augmentations; masked_cartpole registers
# "MaskedCartPole-v1", legal_moves "LegalMoves-v0" and bit_flipping "BitFlipping-v0" (gymnasium
# ids and rl env names); robotics the Fetch tasks (gymnasium-robotics loads on first use).
from rl.envs import (  # noqa: F401
    bit_flipping,
    legal_moves,
    masked_cartpole,
    minigrid,
    multi_agent,
    procgen,
    reward_augmentation,
    robotics,
)
from rl.envs import tf as tf_envs  # noqa: F401  (registers the "tf/..." envs)
from rl.envs.factory import check_env_name, make_vector_env, single_env_spec
from rl.envs.spec import EnvSpec

__all__ = ["EnvSpec", "check_env_name", "make_vector_env", "single_env_spec"]
