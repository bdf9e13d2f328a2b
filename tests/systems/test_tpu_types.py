"""The TPU slice table and `--tpu` parsing (rl/systems/tpu_types.py)."""

from __future__ import annotations

import pytest

from rl.errors import UserError
from rl.systems.tpu_types import TPU_TYPES, parse_tpu, topology_chips


@pytest.mark.parametrize(
    ("text", "name", "accelerator", "topology", "chips", "hosts", "per_host", "machine"),
    [
        # v5e: one TensorCore per chip, so v5e-4 = 4 chips = 2x2 on one ct5lp-hightpu-4t VM.
        ("v5e-4", "v5e-4", "tpu-v5-lite-podslice", "2x2", 4, 1, 4, "ct5lp-hightpu-4t"),
        ("v5litepod-4", "v5e-4", "tpu-v5-lite-podslice", "2x2", 4, 1, 4, "ct5lp-hightpu-4t"),
        ("v5e-1", "v5e-1", "tpu-v5-lite-podslice", "1x1", 1, 1, 1, "ct5lp-hightpu-1t"),
        ("v5e-8", "v5e-8", "tpu-v5-lite-podslice", "2x4", 8, 1, 8, "ct5lp-hightpu-8t"),
        # 4x4 = 16 chips over 4-chip VMs = 4 hosts.
        ("v5e-16", "v5e-16", "tpu-v5-lite-podslice", "4x4", 16, 4, 4, "ct5lp-hightpu-4t"),
        # v4 / v5p: two TensorCores per chip, so v4-8 = 4 chips = 2x2x1, one host.
        ("v4-8", "v4-8", "tpu-v4-podslice", "2x2x1", 4, 1, 4, "ct4p-hightpu-4t"),
        ("V4-32:2x2x4", "v4-32", "tpu-v4-podslice", "2x2x4", 16, 4, 4, "ct4p-hightpu-4t"),
        ("v5p-8", "v5p-8", "tpu-v5p-slice", "2x2x1", 4, 1, 4, "ct5p-hightpu-4t"),
        ("v5p-16", "v5p-16", "tpu-v5p-slice", "2x2x2", 8, 2, 4, "ct5p-hightpu-4t"),
        ("v6e-4", "v6e-4", "tpu-v6e-slice", "2x2", 4, 1, 4, "ct6e-standard-4t"),
        ("v6e-256", "v6e-256", "tpu-v6e-slice", "16x16", 256, 64, 4, "ct6e-standard-4t"),
    ],
)
def test_parse(text, name, accelerator, topology, chips, hosts, per_host, machine):
    tpu = parse_tpu(text)
    assert (tpu.name, tpu.accelerator, tpu.topology) == (name, accelerator, topology)
    assert (tpu.chips, tpu.hosts, tpu.chips_per_host, tpu.machine_type) == (
        chips,
        hosts,
        per_host,
        machine,
    )
    assert tpu.multi_host is (hosts > 1)


def test_table_is_consistent():
    assert {t.generation for t in TPU_TYPES.values()} == {"v4", "v5e", "v5p", "v6e"}
    for name, tpu in TPU_TYPES.items():
        assert name == tpu.name
        assert topology_chips(tpu.topology) == tpu.chips
        assert tpu.hosts * tpu.chips_per_host == tpu.chips, name
        cores = 2 if tpu.generation in ("v4", "v5p") else 1
        assert name == f"{tpu.generation}-{tpu.chips * cores}"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("v5e-3", ["'v5e-3'", "did you mean", "v5e-4", "valid: v5e-1"]),
        ("v5e-4:4x4", ["topology '4x4'", "v5e-4:2x2"]),
        ("v4-8:2x2x2", ["topology '2x2x2'", "v4-8:2x2x1"]),
        ("v7-8", ["'v7-8'", "v4-8", "v6e-256"]),
        ("tpu", ["'tpu'", "valid:"]),
    ],
)
def test_bad_types(text, words):
    with pytest.raises(UserError) as info:
        parse_tpu(text)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)
