"""Offline validation of JobSet manifests against the vendored JobSet CRD schema.

`kubernetes-validate` knows the built-in kinds only; a JobSet is a custom resource, whose schema
lives in its CRD (tests/systems/jobset_crd/README.md says where the fixture comes from). The API
server validates a custom resource against that OpenAPI v3 schema; `jsonschema` does the same
here. In strict mode (the default, as `kubectl apply --validate=strict`) an unknown field is an
error instead of being pruned silently.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import jsonschema

JOBSET_SCHEMA = Path(__file__).parent / "jobset_crd" / "jobset-v0.12.0-v1alpha2.schema.json"
JOBSET_VERSION = "v0.12.0"

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


def _strict(node: Any) -> Any:
    """A copy of the schema where an object schema that lists `properties` refuses any other
    key, unless it says otherwise (`additionalProperties`, preserve-unknown-fields)."""
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _strict(value) for key, value in node.items()}
    if (
        "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def _format_checker() -> jsonschema.FormatChecker:
    """OpenAPI's integer formats, which jsonschema does not know."""
    checker = jsonschema.FormatChecker()
    for name, (low, high) in {"int32": _INT32, "int64": _INT64}.items():
        # A format constrains only the type it is about (here the `type: integer` check
        # reports a string).
        checker.checks(name)(
            lambda value, low=low, high=high: not isinstance(value, int) or low <= value <= high
        )
    return checker


@functools.cache
def crd_validator(path: Path, strict: bool) -> jsonschema.Draft4Validator:
    """A validator of the vendored openAPIV3Schema at `path` (strict: unknown fields refused);
    also used for the KubeRay RayJob schema (rayjob_schema.py)."""
    schema = json.loads(path.read_text(encoding="utf-8"))
    schema = _strict(schema) if strict else copy.deepcopy(schema)
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=_format_checker())


def validate_jobset(manifest: dict[str, Any], strict: bool = True) -> None:
    """Raises jsonschema.ValidationError (the most relevant error) if the JobSet is invalid."""
    if manifest.get("apiVersion") != "jobset.x-k8s.io/v1alpha2" or manifest.get("kind") != "JobSet":
        raise jsonschema.ValidationError(
            f"not a jobset.x-k8s.io/v1alpha2 JobSet: {manifest.get('apiVersion')} "
            f"{manifest.get('kind')}"
        )
    error = jsonschema.exceptions.best_match(
        crd_validator(JOBSET_SCHEMA, strict).iter_errors(manifest)
    )
    if error is not None:
        raise error


def child_jobs(jobset: dict[str, Any]) -> list[dict[str, Any]]:
    """The batch/v1 Jobs the JobSet controller makes from the JobSet: `<jobset>-<replicated
    job>-<i>` from each replicated Job's template, so kubernetes-validate can check them too.
    (The controller also adds its own labels and annotations and sets the Pods' subdomain;
    those are its business, not the manifest's.)"""
    jobs = []
    for replicated in jobset["spec"]["replicatedJobs"]:
        template = copy.deepcopy(replicated["template"])
        for index in range(replicated.get("replicas", 1)):
            metadata = dict(template.get("metadata", {}))
            metadata["name"] = f"{jobset['metadata']['name']}-{replicated['name']}-{index}"
            metadata["namespace"] = jobset["metadata"]["namespace"]
            jobs.append(
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": metadata,
                    "spec": copy.deepcopy(template["spec"]),
                }
            )
    return jobs
