"""Environments written in TF ops for the compiled path, registered as "tf/<gymnasium id>".

Why they exist: docs/architecture.md ("Speed rules") — with the env in TF ops, acting,
stepping and learning can run as one XLA program over many envs. Each env mirrors one of
gymnasium's classic-control sources (gymnasium/envs/classic_control/*.py) step for step; see
`rl.envs.tf.base` for the protocol (`TFEnv.reset` / `TFEnv.step`, same-step auto-reset, time
limits, per-env counter-based RNG) and each module for its source and tolerances.

The registered factories return a `TFEnv` (`registry.get_env_factory("tf/CartPole-v1")()`),
not a gymnasium env: `rl.envs.make_vector_env` refuses "tf/" names.
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
