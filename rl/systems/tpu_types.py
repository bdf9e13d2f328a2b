"""Cloud TPU slice types on GKE: the table behind `--tpu v5e-4` and its validation.

A slice name is `<generation>-<N>` with N TensorCores (twice the chips on v4 and v5p; `v5litepod-N`
means `v5e-N`), optionally with GKE's topology for it (`v4-32:2x2x4`). Source: GKE's "Plan TPUs in
GKE" and the Cloud TPU configuration tables (2026); checked on paper, not on a live cluster.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rl.errors import UserError, did_you_mean


@dataclass(frozen=True)
class TpuGeneration:
    name: str  # "v5e"
    accelerator: str  # value of the cloud.google.com/gke-tpu-accelerator node label
    cores_per_chip: int  # TensorCores per chip: the slice name counts cores
    # Topologies served by ONE host: topology -> (machine type, chips on that host).
    single_host: dict[str, tuple[str, int]]
    # Multi-host slices use this machine type with `multi_host_chips` chips on each host.
    multi_host_machine: str
    multi_host_chips: int
    multi_host: tuple[str, ...]  # multi-host topologies, smallest first


@dataclass(frozen=True)
class TpuSlice:
    """A validated `--tpu` value: everything the manifests need."""

    name: str  # canonical name, e.g. "v5e-4"
    generation: str  # "v5e"
    accelerator: str  # node label value, e.g. "tpu-v5-lite-podslice"
    topology: str  # e.g. "2x2"
    machine_type: str  # GKE node pool machine type, e.g. "ct5lp-hightpu-4t"
    chips: int  # chips in the whole slice
    hosts: int  # TPU VMs (Kubernetes nodes, one Pod each)
    chips_per_host: int  # the `google.com/tpu` request of each Pod

    @property
    def multi_host(self) -> bool:
        return self.hosts > 1


def _three_d(name: str, accelerator: str, machine: str) -> TpuGeneration:
    """v4 and v5p: 3-D tori, 2 TensorCores a chip, every host one 4-chip machine."""
    cubes = ("2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8")
    return TpuGeneration(name, accelerator, 2, {"2x2x1": (machine, 4)}, machine, 4, cubes)


def _two_d(name: str, accelerator: str, machine_prefix: str) -> TpuGeneration:
    """v5e and v6e: 2-D, 1 TensorCore a chip, hosts of 1, 4 or 8 chips (`<prefix>-<chips>t`)."""
    single_host = {
        t: (f"{machine_prefix}-{c}t", c) for t, c in (("1x1", 1), ("2x2", 4), ("2x4", 8))
    }
    planes = ("4x4", "4x8", "8x8", "8x16", "16x16")
    return TpuGeneration(name, accelerator, 1, single_host, f"{machine_prefix}-4t", 4, planes)


GENERATIONS: dict[str, TpuGeneration] = {
    gen.name: gen
    for gen in (
        _three_d("v4", "tpu-v4-podslice", "ct4p-hightpu-4t"),
        _two_d("v5e", "tpu-v5-lite-podslice", "ct5lp-hightpu"),
        _three_d("v5p", "tpu-v5p-slice", "ct5p-hightpu-4t"),
        _two_d("v6e", "tpu-v6e-slice", "ct6e-standard"),
    )
}


ALIASES = {"v5litepod": "v5e"}


def topology_chips(topology: str) -> int:
    return math.prod(int(part) for part in topology.split("x"))


def _build_table() -> dict[str, TpuSlice]:
    table: dict[str, TpuSlice] = {}
    for gen in GENERATIONS.values():
        shapes = [(t, m, c) for t, (m, c) in gen.single_host.items()]
        shapes += [(t, gen.multi_host_machine, gen.multi_host_chips) for t in gen.multi_host]
        for topology, machine, chips_per_host in shapes:
            chips = topology_chips(topology)
            name = f"{gen.name}-{chips * gen.cores_per_chip}"
            table[name] = TpuSlice(
                name=name,
                generation=gen.name,
                accelerator=gen.accelerator,
                topology=topology,
                machine_type=machine,
                chips=chips,
                hosts=chips // chips_per_host,
                chips_per_host=chips_per_host,
            )
    return table


TPU_TYPES: dict[str, TpuSlice] = _build_table()


def tpu_type_names() -> list[str]:
    """Every valid `--tpu` name, grouped by generation, smallest slice first."""
    return list(TPU_TYPES)


def parse_tpu(text: str) -> TpuSlice:
    """`"v5e-4"`, `"v5litepod-4"` or `"v4-32:2x2x4"` -> TpuSlice, else a UserError."""
    name, _, topology = text.strip().lower().partition(":")
    generation, dash, size = name.partition("-")
    name = f"{ALIASES.get(generation, generation)}{dash}{size}"
    if name not in TPU_TYPES:
        names = tpu_type_names()
        hint = did_you_mean(name, names)
        if generation in GENERATIONS or generation in ALIASES:
            gen = ALIASES.get(generation, generation)
            names = [n for n in names if TPU_TYPES[n].generation == gen]
        raise UserError(
            f"--tpu {text!r} is not a TPU slice type GKE offers{hint}; "
            f"valid: {', '.join(names)} (N counts TensorCores: v4/v5p have 2 per chip)"
        )
    tpu = TPU_TYPES[name]
    if topology and topology != tpu.topology:
        raise UserError(
            f"--tpu {text!r}: topology {topology!r} is not valid for {tpu.name} "
            f"({tpu.chips} chips); GKE uses {tpu.name}:{tpu.topology}"
        )
    return tpu
