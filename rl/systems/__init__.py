"""`--sys` targets, registered by name: `local` (this process), `tpu` (a GKE TPU Job) and `gke`
(a GKE Indexed Job of CPU/GPU workers for MultiWorkerMirroredStrategy)."""

from rl.systems import gke, local, tpu  # noqa: F401  (register "gke", "local" and "tpu")
