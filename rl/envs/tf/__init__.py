"""Environments written in TF ops for the compiled path, registered as "tf/<gymnasium id>".

Each mirrors one of gymnasium's classic-control envs step for step (the protocol:
`rl.envs.tf.base`). The factories return a `TFEnv`, not a gymnasium env:
`rl.envs.make_vector_env` refuses "tf/" names.
"""

from rl import registry
from rl.envs.tf.acrobot import Acrobot
from rl.envs.tf.base import BoxSpec, DiscreteSpec, EnvState, TFEnv, TimeStep
from rl.envs.tf.cartpole import CartPole
from rl.envs.tf.mountain_car import MountainCar, MountainCarContinuous
from rl.envs.tf.pendulum import Pendulum

ENVS: tuple[type[TFEnv], ...] = (CartPole, Acrobot, MountainCar, MountainCarContinuous, Pendulum)

for _env_class in ENVS:
    registry.register_env(_env_class.env_id, _env_class)


def make_tf_env(name: str, **kwargs) -> TFEnv:
    """The TFEnv registered as `name` ("tf/CartPole-v1"); kwargs: max_episode_steps, dtype."""
    return registry.get_env_factory(name)(**kwargs)


__all__ = [
    "ENVS",
    "Acrobot",
    "BoxSpec",
    "CartPole",
    "DiscreteSpec",
    "EnvState",
    "MountainCar",
    "MountainCarContinuous",
    "Pendulum",
    "TFEnv",
    "TimeStep",
    "make_tf_env",
]
