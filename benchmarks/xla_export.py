"""Writes one compiled TensorFlow program into a bundle (benchmarks/xla_bundle.py): its HLO, its
parameters' values and TF's own outputs after a few calls.

Why: a machine without TensorFlow (the lent GPU image has only JAX) can still run our programs,
since a `tf.function(jit_compile=True)` is an XLA program. TF compiles it with the function's
arguments first and then its captured resource variables as HLO parameters; an updated
variable comes back as an extra output aliased to its parameter. This module names every
parameter and output from the traced function, checks the names against the HLO's own
signature (so a parameter TF folded away or reordered fails here, not as a wrong number on the
device), and records TF's outputs after `reference_calls` calls for the replay's parity check.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from benchmarks import xla_bundle as xb


@dataclasses.dataclass
class Program:
    """A program to export: `function` is called as `function(*args)` (args: the non-variable
    inputs, fed unchanged every call); everything else it reads or writes is variables."""

    name: str
    about: str
    function: Any  # a tf.function with jit_compile=True
    args: tuple = ()
    unit: str = "calls"
    per_call: int = 1
    compute: str = "float32"  # "bfloat16": the parity check allows bfloat16's rounding


def _paths(structure: Any, path: str) -> list[str]:
    if isinstance(structure, dict):
        return [p for key in sorted(structure) for p in _paths(structure[key], f"{path}/{key}")]
    if isinstance(structure, (list, tuple)):
        return [p for i, item in enumerate(structure) for p in _paths(item, f"{path}/{i}")]
    return [path]


def _named_flat(structure: Any, prefix: str) -> list[tuple[str, Any]]:
    """[(path, leaf)] in `tf.nest.flatten`'s order (dict keys sorted), the paths under `prefix`."""
    if structure is None:
        return []
    leaves = tf.nest.flatten(structure)
    paths = _paths(structure, prefix)
    if len(paths) != len(leaves):
        raise RuntimeError(f"cannot name the leaves of {type(structure).__name__} {prefix}")
    return list(zip(paths, leaves, strict=True))


def _parameter_sources(program: Program) -> tuple[Any, list[tuple[str, str, Any]]]:
    """(concrete function, [(name, kind, tensor or variable)] in the HLO's parameter order)."""
    concrete = program.function.get_concrete_function(*program.args)
    variables = {id(v.handle): v for v in concrete.graph.variables}
    sources = [(name, "input", value) for name, value in _named_flat(program.args, "arg")]
    for index, captured in enumerate(concrete.captured_inputs):
        variable = variables.get(id(captured))
        if variable is None:  # an eager tensor captured by value: a constant input
            sources.append((f"captured_{index}", "input", captured))
        else:
            sources.append((f"{index}:{variable.name.removesuffix(':0')}", "variable", variable))
    return concrete, sources


def _value(source: Any) -> np.ndarray:
    return source.numpy() if hasattr(source, "numpy") else np.asarray(source)


def export_program(
    program: Program, directory: Path, reference_calls: int, reference_limit: int = 0
) -> dict[str, Any]:
    """Writes `program`'s HLO, values and (when `reference_calls` > 0) TF's outputs of that call
    into `directory`; returns its manifest entry. Runs the program `reference_calls` times.
    `reference_limit` > 0 keeps only the first that many elements of each reference output (a
    bundle that must stay small: the Nature CNN's weights and slots are ~20 MB per program)."""
    start = time.perf_counter()
    concrete, sources = _parameter_sources(program)
    compiler_ir = program.function.experimental_get_compiler_ir(*program.args)
    hlo_text = compiler_ir(stage="hlo")
    serialized = compiler_ir(stage="hlo_serialized")
    param_shapes, output_shapes = xb.entry_signature(hlo_text)
    aliases = xb.input_output_alias(hlo_text)
    if len(param_shapes) != len(sources):
        raise RuntimeError(
            f"{program.name}: the HLO has {len(param_shapes)} parameters, the function "
            f"{len(sources)} inputs and captures (TF folded or added one): cannot name them"
        )
    values, params = {}, []
    for i, ((name, kind, source), (shape, dtype)) in enumerate(
        zip(sources, param_shapes, strict=True)
    ):
        value = _value(source)
        if list(value.shape) != shape or xb.stored(value, dtype).dtype != np.dtype(
            xb.STORED_AS.get(dtype, dtype)
        ):
            raise RuntimeError(
                f"{program.name}: parameter {i} ({name}) is {value.dtype}"
                f"{list(value.shape)}, the HLO says {dtype}{shape}"
            )
        values[f"p{i}"] = xb.stored(value, dtype)
        params.append({"name": name, "kind": kind, "shape": shape, "dtype": dtype})

    returned = _named_flat(concrete.structured_outputs, "out")
    if len(returned) + len(aliases) != len(output_shapes) or any(
        o < len(returned) for o in aliases
    ):
        raise RuntimeError(
            f"{program.name}: {len(output_shapes)} HLO outputs are not the function's "
            f"{len(returned)} outputs followed by {len(aliases)} updated variables"
        )
    outputs = []
    for o, (shape, dtype) in enumerate(output_shapes):
        feeds = aliases.get(o)
        name = returned[o][0] if o < len(returned) else params[feeds]["name"]
        outputs.append({"name": name, "shape": shape, "dtype": dtype, "feeds": feeds})
    export_s = time.perf_counter() - start

    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{program.name}.hlo.pb").write_bytes(serialized)
    np.savez_compressed(directory / f"{program.name}.values.npz", **values)
    entry = {
        "name": program.name,
        "about": program.about,
        "hlo": f"{program.name}.hlo.pb",
        "values": f"{program.name}.values.npz",
        "params": params,
        "outputs": outputs,
        "work": {"unit": program.unit, "per_call": program.per_call},
        "compute": program.compute,
        "custom_calls": sorted(set(_custom_calls(hlo_text))),
        "ops": _opcodes(hlo_text),
        "export_s": round(export_s, 2),
        "reference_calls": 0,
    }
    if reference_calls > 0:
        start = time.perf_counter()
        entry["reference"] = f"{program.name}.reference.npz"
        entry["reference_calls"] = reference_calls
        reference = _reference(program, sources, outputs, reference_calls)
        for o, output in enumerate(outputs):
            if reference_limit and reference[f"o{o}"].size > reference_limit:
                reference[f"o{o}"] = reference[f"o{o}"].reshape(-1)[:reference_limit]
                output["reference_elements"] = reference_limit
        np.savez_compressed(directory / entry["reference"], **reference)
        entry["tf_run_s"] = round(time.perf_counter() - start, 2)
    return entry


def _reference(program: Program, sources: list, outputs: list[dict], calls: int) -> dict:
    """TF's own outputs of call number `calls` (from the exported values), per HLO output."""
    for _ in range(calls):
        result = program.function(*program.args)
    returned = [value for _, value in _named_flat(result, "out")]
    reference = {}
    for o, output in enumerate(outputs):
        if output["feeds"] is None:
            source = returned[o]
        elif sources[output["feeds"]][1] == "variable":
            source = sources[output["feeds"]][2]
        else:
            raise RuntimeError(f"{program.name}: output {o} aliases an input, not a variable")
        reference[f"o{o}"] = xb.stored(_value(source), output["dtype"])
    return reference


def _opcodes(hlo_text: str) -> list[str]:
    """The HLO opcodes the module uses (what a backend must implement), sorted."""
    text = re.sub(r"/\*.*?\*/", "", hlo_text)  # `/*index=5*/` inside tuple shapes
    return sorted(set(re.findall(r"= (?:\([^=]*?\)|\S+) ([a-z][a-z0-9-]*)\(", text)))


def _custom_calls(hlo_text: str) -> list[str]:
    """The custom-call targets in the module: ops an XLA backend may lack (none expected)."""
    return re.findall(r'custom_call_target="([^"]+)"', hlo_text)


def write_manifest(directory: Path, entries: list[dict[str, Any]], profile: str) -> None:
    manifest = {"tf_version": tf.__version__, "profile": profile, "programs": entries}
    (directory / xb.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
