"""Offline validation of KubeRay RayJob manifests against the vendored RayJob CRD schema
(tests/systems/kuberay_crd/README.md says where it comes from), strict as the JobSet's
(jobset_schema.py): an unknown field is an error, as with `kubectl apply --validate=strict`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
from jobset_schema import crd_validator

RAYJOB_SCHEMA = Path(__file__).parent / "kuberay_crd" / "rayjob-v1.7.0-v1.schema.json"
KUBERAY_VERSION = "v1.7.0"


def validate_rayjob(manifest: dict[str, Any], strict: bool = True) -> None:
    """Raises jsonschema.ValidationError (the most relevant error) if the RayJob is invalid."""
    if manifest.get("apiVersion") != "ray.io/v1" or manifest.get("kind") != "RayJob":
        raise jsonschema.ValidationError(
            f"not a ray.io/v1 RayJob: {manifest.get('apiVersion')} {manifest.get('kind')}"
        )
    validator = crd_validator(RAYJOB_SCHEMA, strict)
    error = jsonschema.exceptions.best_match(validator.iter_errors(manifest))
    if error is not None:
        raise error


def kuberay_refusals(rayjob: dict[str, Any]) -> list[str]:
    """What the KubeRay v1.7.0 operator's Go validation would refuse in this RayJob, for the
    fields the launcher sets: the rules of `ValidateRayJobMetadata`, `ValidateRayJobSpec`,
    `validateDeletionConfiguration` and `ValidateRayClusterSpec` (autoscaling off) in
    ray-operator/controllers/ray/utils/validation.go, restated. Empty: accepted."""
    refusals = []
    name, spec = rayjob["metadata"]["name"], rayjob["spec"]
    if len(name) > 47 or not re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", name):
        refusals.append("name: a DNS-1035 label of at most 47 characters")
    if spec.get("ttlSecondsAfterFinished", 0) < 0:
        refusals.append("ttlSecondsAfterFinished < 0")
    if spec.get("ttlSecondsAfterFinished", 0) > 0 and not spec.get("shutdownAfterJobFinishes"):
        refusals.append("ttlSecondsAfterFinished without shutdownAfterJobFinishes")
    if spec.get("backoffLimit", 0) < 0:
        refusals.append("backoffLimit < 0")
    cluster = spec["rayClusterSpec"]
    groups = [
        ("head", cluster["headGroupSpec"]),
        *[(g["groupName"], g) for g in cluster.get("workerGroupSpecs", [])],
    ]
    for group_name, group in groups:
        if not group["template"]["spec"].get("containers"):
            refusals.append(f"{group_name}: no container")
        start = group.get("rayStartParams", {})
        if any(start.get(k) for k in ("num-cpus", "num-gpus", "memory", "resources")) and group.get(
            "resources"
        ):
            refusals.append(f"{group_name}: resources in both rayStartParams and resources")
        if group_name != "head":
            low, high = group.get("minReplicas"), group.get("maxReplicas")
            if low is None or high is None or low < 0 or high < 0 or low > high:
                refusals.append(f"{group_name}: minReplicas/maxReplicas unset, negative or crossed")
    return refusals
