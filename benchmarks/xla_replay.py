"""Runs one exported program (benchmarks/xla_bundle.py) with jax/jaxlib only: no TensorFlow.

Why: the lent GPU machines have JAX but no TensorFlow, and TF's wheel cannot be carried there;
the programs are XLA all the same. The HLO module is converted to StableHLO by jaxlib's own
converter (`hlo_to_stablehlo`), compiled by the backend's PJRT client and called with the
exported values; each call's aliased outputs (TF's updated resource variables) become the next
call's parameters, as TF's variables carry state between calls. The other inputs are fed
unchanged. After the manifest's `reference_calls` calls the outputs are compared with TF's own;
further calls are timed.

This leans on jaxlib internals (`xla_client._xla.mlir.hlo_to_stablehlo`, the client's
`compile_and_load`), present in jaxlib 0.10 and 0.11: a newer jaxlib may move them, which this
module reports as the replay's error rather than a wrong number.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np

from benchmarks import xla_bundle as xb

jax.config.update("jax_enable_x64", True)  # int64 variables (step counters, RNG state) stay so

from jax._src import xla_bridge  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax._src.lib import xla_client  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402


def compile_module(hlo_proto: bytes, backend: Any, device: Any) -> Any:
    """The backend's loaded executable of a serialized HloModuleProto."""
    stablehlo = xla_client._xla.mlir.hlo_to_stablehlo(hlo_proto)
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(stablehlo)
        devices = xla_client.DeviceList((device,))
        return backend.compile_and_load(module, devices, xla_client.CompileOptions())


def _peak_memory(device: Any) -> tuple[int, str]:
    """(bytes, where): the device's peak allocation where it tracks one, else this process's
    maximum resident set (CPU; a process runs one program, so it is that program's peak)."""
    stats = device.memory_stats() if hasattr(device, "memory_stats") else None
    if stats and "peak_bytes_in_use" in stats:
        return int(stats["peak_bytes_in_use"]), "device peak"
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "process max RSS"


class Runner:
    """An executable and its parameters: `call` runs it once and feeds each aliased output (an
    updated variable) into its parameter for the next call."""

    def __init__(self, executable: Any, entry: dict[str, Any], values: list, device: Any):
        self.executable = executable
        self.buffers = [jax.device_put(value, device) for value in values]
        self.feeds = [(o, out["feeds"]) for o, out in enumerate(entry["outputs"])
                      if out["feeds"] is not None]  # fmt: skip
        self.outputs: list[Any] = []

    def call(self, times: int = 1) -> None:
        for _ in range(times):
            self.outputs = self.executable.execute(self.buffers)
            for o, p in self.feeds:
                self.buffers[p] = self.outputs[o]

    def host_outputs(self) -> list[np.ndarray]:
        return [np.asarray(o) for o in self.outputs]


def exported_values(bundle: Path, entry: dict[str, Any], nudge: bool = False) -> list:
    """The parameters' exported values; `nudge`: every float variable moved by one ulp (the
    parity check's rounding yardstick)."""
    stored = np.load(bundle / entry["values"])
    values = [xb.loaded(stored[f"p{i}"], p["dtype"]) for i, p in enumerate(entry["params"])]
    if nudge:
        for i, p in enumerate(entry["params"]):
            if p["kind"] == "variable" and p["dtype"] in ("float16", "float32", "float64"):
                values[i] = np.nextafter(values[i], np.inf).astype(values[i].dtype)
    return values


def replay(bundle: Path, entry: dict[str, Any], backend_name: str, calls: int) -> dict[str, Any]:
    """Compiles `entry`'s program, runs its reference calls (parity with TF) and `calls` timed
    calls; returns the figures (compile seconds, calls/s, work/s, peak memory, parity)."""
    backend = xla_bridge.get_backend(backend_name)
    device = backend.devices()[0]
    start = time.perf_counter()
    executable = compile_module((bundle / entry["hlo"]).read_bytes(), backend, device)
    result: dict[str, Any] = {"name": entry["name"], "compile_s": time.perf_counter() - start}

    runner = Runner(executable, entry, exported_values(bundle, entry), device)
    start = time.perf_counter()
    runner.call()  # the first call: allocation and warm-up (not timed as a rate)
    jax.block_until_ready(runner.outputs)
    result["first_call_s"] = time.perf_counter() - start
    if len(runner.outputs) != len(entry["outputs"]):
        raise RuntimeError(f"the executable returned {len(runner.outputs)} outputs, the "
                           f"manifest lists {len(entry['outputs'])}")  # fmt: skip
    reference_calls = entry.get("reference_calls", 0)
    if reference_calls:
        runner.call(reference_calls - 1)
        nudged = Runner(executable, entry, exported_values(bundle, entry, nudge=True), device)
        nudged.call(reference_calls)
        result["parity"] = parity(bundle, entry, runner.host_outputs(), nudged.host_outputs())
        del nudged
    start = time.perf_counter()
    runner.call(calls)
    jax.block_until_ready(runner.outputs)
    seconds = time.perf_counter() - start
    peak, where = _peak_memory(device)
    result.update(
        calls=calls,
        calls_per_s=calls / seconds,
        work_per_s=calls * entry["work"]["per_call"] / seconds,
        peak_bytes=peak,
        peak_where=where,
    )
    return result


def parity(
    bundle: Path, entry: dict[str, Any], outputs: list[np.ndarray], nudged: list[np.ndarray]
) -> dict[str, Any]:
    """Each output against TF's of the same call. "equal": xla_bundle's parity rule holds for
    all. "within rounding": where it does not, the replay is no farther from TF than twice as
    far as the replay moved when every float variable started one ulp off (`nudged`): a
    difference rounding alone makes in this program (chaotic ones amplify it). Otherwise
    "differs". An output whose reference holds its first n elements is compared on those."""
    reference = np.load(bundle / entry["reference"])
    initial = np.load(bundle / entry["values"])  # read again: donated buffers may reuse memory
    bfloat16 = entry.get("compute") == "bfloat16"
    worst = yardstick = 0.0
    strict, failures = [], []
    for o, out in enumerate(entry["outputs"]):
        expected = xb.loaded(reference[f"o{o}"], out["dtype"])
        found, off = outputs[o], nudged[o]
        before = None
        if out["feeds"] is not None:
            before = xb.loaded(initial[f"p{out['feeds']}"], out["dtype"])
        n = out.get("reference_elements")
        if n is not None:
            found, off = found.reshape(-1)[:n], off.reshape(-1)[:n]
            before = None if before is None else before.reshape(-1)[:n]
        versus_tf = xb.comparison(found, expected, before, bfloat16)
        noise = xb.comparison(found, off)
        if versus_tf["float"]:
            worst = max(worst, versus_tf["max_abs_diff"])
            yardstick = max(yardstick, noise["max_abs_diff"])
        if not versus_tf["mismatches"]:
            continue
        text = (f"{out['name']}: {versus_tf['mismatches']} of {expected.size} outside "
                f"(max |diff| {versus_tf['max_abs_diff']:.3g}; one ulp moved it "
                f"{noise['max_abs_diff']:.3g})")  # fmt: skip
        strict.append(text)
        if versus_tf["float"]:
            rounding = versus_tf["max_abs_diff"] <= 2 * noise["max_abs_diff"]
        else:  # integers: no more of them differ than rounding alone changed
            rounding = versus_tf["mismatches"] <= 2 * noise["mismatches"]
        if not rounding:
            failures.append(text)
    verdict = "differs" if failures else ("within rounding" if strict else "equal")
    return {
        "calls": entry["reference_calls"],
        "outputs": len(entry["outputs"]),
        "max_abs_diff": worst,
        "nudged_max_abs_diff": yardstick,
        "outside_tolerance": strict[:10],
        "verdict": verdict,
        "ok": not failures,
        "failures": failures[:10],
    }


def environment(backend_name: str) -> dict[str, Any]:
    """What ran the replay: versions, the device and, on CPU, the processor's model."""
    import jaxlib

    try:
        device = xla_bridge.get_backend(backend_name).devices()[0]
        kind = getattr(device, "device_kind", str(device))
    except RuntimeError as error:  # no such backend here: the programs' rows say so too
        kind = f"unavailable: {error}"
    facts = {
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "python": platform.python_version(),
        "backend": backend_name,
        "device": kind,
        "cpu_count": os.cpu_count(),
    }
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu_model"] = line.split(":", 1)[1].strip()
                break
    return facts


def main_one(bundle: Path, name: str, backend_name: str, calls: int) -> None:
    """Replays program `name` and prints its figures as one JSON line (a worker process)."""
    manifest = json.loads((bundle / xb.MANIFEST).read_text())
    entry = next(e for e in manifest["programs"] if e["name"] == name)
    print(json.dumps(replay(bundle, entry, backend_name, calls)), flush=True)
