"""Network factories, registered by name (explicit imports fill the registry)."""

from rl.models import cnn, encoders, mlp  # noqa: F401  (register "cnn", "auto", "mlp")
from rl.models.actor_critic import ActorCritic
from rl.models.continuous import Critics, DeterministicActor, GaussianActor
from rl.models.q_network import DuelingHead, QNetwork

__all__ = [
    "ActorCritic",
    "Critics",
    "DeterministicActor",
    "DuelingHead",
    "GaussianActor",
    "QNetwork",
]
