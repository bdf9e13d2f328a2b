"""The bundle of exported XLA programs: its layout and the facts read from an HLO module's text.

Why a module of its own: the exporter (TensorFlow) writes the bundle and the replay (jax/jaxlib,
no TensorFlow) reads it, so what both must agree on lives here, in plain Python and NumPy.

A bundle is a folder:

    manifest.json          {"tf_version", "profile", "programs": [entry, ...]}
    <name>.hlo.pb          the HloModuleProto, `experimental_get_compiler_ir(...)(stage=
                           "hlo_serialized")` of the program's `tf.function(jit_compile=True)`
    <name>.values.npz      p0, p1, ...: each HLO parameter's value before the first call
    <name>.reference.npz   o0, o1, ...: each HLO output of TF's own call number `reference_calls`

An entry lists the parameters ({name, kind: "input" | "variable", shape, dtype}) in the HLO's
order, the outputs ({name, shape, dtype, feeds}) where `feeds` is the parameter an output
becomes on the next call (the HLO's input/output alias: an updated resource variable), and the
work one call does ({"unit": "env steps", "per_call": 2048}).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

MANIFEST = "manifest.json"

# HLO primitive type -> NumPy dtype name (bfloat16 is stored as its uint16 bits: NumPy's npz has
# no bfloat16; the replay views it back as ml_dtypes' bfloat16, which jax ships).
HLO_DTYPES = {
    "pred": "bool",
    "s8": "int8",
    "s16": "int16",
    "s32": "int32",
    "s64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
}
STORED_AS = {"bfloat16": "uint16"}

_ENTRY = re.compile(r"^ENTRY %\S+ \((?P<params>.*)\) -> (?P<result>.*) \{$")
_ALIAS = re.compile(r"\{(\d+)\}: \((\d+), \{\}, (?:may|must)-alias\)")
_SHAPE = re.compile(r"^(?P<type>[a-z]+[0-9]*)\[(?P<dims>[0-9,]*)\](?:\{[0-9,]*\})?$")


def hlo_shape(text: str) -> tuple[list[int], str]:
    """`f32[4,64]` -> ([4, 64], "float32"); ValueError for a tuple, a token or a dynamic shape."""
    match = _SHAPE.match(text.strip())
    if not match or match["type"] not in HLO_DTYPES:
        raise ValueError(f"not a static array shape: {text!r}")
    dims = [int(d) for d in match["dims"].split(",") if d]
    return dims, HLO_DTYPES[match["type"]]


def _split_top_level(text: str) -> list[str]:
    """Splits on the commas outside brackets and braces (`f32[4,64]{1,0}` stays whole)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    return [*parts, tail] if tail else parts


def entry_signature(
    hlo_text: str,
) -> tuple[list[tuple[list[int], str]], list[tuple[list[int], str]]]:
    """(parameters, outputs) of the ENTRY computation as (shape, dtype) pairs, in order."""
    text = re.sub(r"/\*.*?\*/", "", hlo_text)
    for line in text.splitlines():
        match = _ENTRY.match(line.strip())
        if match:
            break
    else:
        raise ValueError("no ENTRY computation in the HLO text")
    params = [hlo_shape(p.split(":", 1)[1]) for p in _split_top_level(match["params"])]
    result = match["result"].strip()
    if result.startswith("("):
        outputs = [hlo_shape(o) for o in _split_top_level(result[1:-1])]
    else:
        outputs = [hlo_shape(result)]
    return params, outputs


def input_output_alias(hlo_text: str) -> dict[int, int]:
    """{output index: parameter number} from the HloModule line's `input_output_alias`."""
    header = hlo_text.split("\n", 1)[0]
    if "input_output_alias={" not in header:
        return {}
    aliases = header.split("input_output_alias={", 1)[1]
    return {int(out): int(param) for out, param in _ALIAS.findall(aliases)}


def stored(array: np.ndarray, dtype: str) -> np.ndarray:
    """`array` as the bundle stores a value of HLO dtype `dtype`."""
    return array.view(STORED_AS[dtype]) if dtype in STORED_AS else np.asarray(array, dtype)


def loaded(array: np.ndarray, dtype: str) -> np.ndarray:
    """A stored value back in HLO dtype `dtype` (bfloat16 through ml_dtypes, which jax ships)."""
    if dtype in STORED_AS:
        import ml_dtypes

        return array.view(getattr(ml_dtypes, dtype))
    return array


def bundle_bytes(directory: Path) -> int:
    """The bundle's size on disk: what a device run carries."""
    return sum(path.stat().st_size for path in Path(directory).iterdir() if path.is_file())


# The parity rule. Float32 programs: tests/compiled's equivalence tolerance (`assert_same_run`).
# Programs computing in bfloat16: TF's XLA and jaxlib's XLA round bf16 intermediates at other
# places (fusion), so returned floats get bfloat16's resolution (rtol 1e-2, 2.5 ulps) and state
# (an output fed back: weights, optimizer slots) may drift from TF's by at most a quarter of what
# the calls changed it by: Adam moves a weight by ~lr whatever its gradient's size, so a weight
# whose tiny gradient rounds differently moves differently, while a program that computed
# something else (or nothing) would be off by the whole change.
RTOL, ATOL = 1e-4, 1e-6
BF16_RTOL, BF16_DRIFT = 1e-2, 0.25


def comparison(
    actual: np.ndarray,
    expected: np.ndarray,
    initial: np.ndarray | None = None,
    bfloat16: bool = False,
) -> dict[str, Any]:
    """How far `actual` is from `expected` (TF's): integers and booleans must be equal, floats
    within the parity rule above (`initial`: the value before the calls, for a fed-back output
    of a bfloat16 program). {"max_abs_diff", "mismatches", "float"}."""
    is_float = np.issubdtype(expected.dtype, np.floating) or expected.dtype.name == "bfloat16"
    if actual.shape != expected.shape:
        return {"max_abs_diff": float("inf"), "mismatches": int(expected.size), "float": is_float}
    if not is_float:
        return {"max_abs_diff": 0.0, "mismatches": int((actual != expected).sum()), "float": False}
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(e)
    diff = np.where(both_nan, 0.0, np.abs(a - e))
    worst = float(np.nan_to_num(diff, nan=np.inf).max()) if diff.size else 0.0
    close = np.isclose(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
    if bfloat16 and not close.all():
        if initial is None:
            close = np.isclose(a, e, rtol=BF16_RTOL, atol=ATOL, equal_nan=True)
        else:
            change = float(np.abs(e - initial.astype(np.float64)).max())
            close = np.full(close.shape, worst <= BF16_DRIFT * change)
    return {"max_abs_diff": worst, "mismatches": int((~close).sum()), "float": True}


def entry_summary(entry: dict[str, Any]) -> str:
    """One line: name, parameters (inputs + variables), outputs fed back, work per call."""
    kinds = [p["kind"] for p in entry["params"]]
    fed = sum(o["feeds"] is not None for o in entry["outputs"])
    work = entry["work"]
    return (
        f"{entry['name']}: {kinds.count('input')} inputs + {kinds.count('variable')} variables, "
        f"{len(entry['outputs'])} outputs ({fed} fed back), {work['per_call']:,} "
        f"{work['unit']} per call"
    )
