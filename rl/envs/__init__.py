"""Environments: gymnasium vector envs by name, and the EnvSpec that describes them."""

from rl.envs import tf as tf_envs  # noqa: F401  (registers the "tf/..." envs)
from rl.envs.factory import check_env_name, make_vector_env
from rl.envs.spec import EnvSpec

__all__ = ["EnvSpec", "check_env_name", "make_vector_env"]
