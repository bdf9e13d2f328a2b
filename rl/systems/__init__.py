"""`--sys` targets, registered by name. `tpu` (GKE) lands with the scale-out issue."""

from rl.systems import local  # noqa: F401  (registers "local")
