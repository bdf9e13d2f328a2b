"""Offline validation of KubeRay RayJob manifests against the vendored RayJob CRD schema
(tests/systems/kuberay_crd/README.md says where it comes from), strict as the JobSet's
(jobset_schema.py): an unknown field is an error, as with `kubectl apply --validate=strict`."""

from __future__ import annotations

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
