"""`--sys` targets: `local` (this process), `tpu` and `gke` (Kubernetes Jobs on GKE)."""

from rl.systems import gke, local, tpu  # noqa: F401  (register "gke", "local" and "tpu")
