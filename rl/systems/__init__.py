"""`--sys` targets, registered by name: `local` (this process) and `tpu` (a GKE TPU Job)."""

from rl.systems import local, tpu  # noqa: F401  (register "local" and "tpu")
