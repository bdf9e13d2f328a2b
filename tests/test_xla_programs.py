"""benchmarks/xla_programs.py's plain-Python parts (no TF, no jax): the HLO signature and alias
read from a module's text, the parity rule, the replay side's imports, and the generated docs
section. The export and the replay themselves run in CI's own step (.ci/xla-replay)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import xla_bundle as xb
from benchmarks import xla_programs

ROOT = Path(__file__).resolve().parents[1]


# The first line and the ENTRY line of a TF module (a variable updated in a while loop),
# trimmed: the variable is the last parameter and comes back as the last output.
HLO = """HloModule a_inference_step_12__.30, input_output_alias={ {2}: (2, {}, may-alias) }, \
entry_computation_layout={(f32[32,8]{1,0}, s32[], f32[8,8]{1,0})->(f32[32,8]{1,0}, f32[], \
f32[8,8]{1,0})}

%body (arg_tuple.1: (s32[], f32[32,8])) -> (s32[], f32[32,8]) {
  %x = (s32[], f32[32,8]) parameter(0)
}

ENTRY %a_inference_step_12__.30 (arg0.1: f32[32,8], arg1.2: s32[], arg2.3: f32[8,8]) -> \
(f32[32,8], f32[], /*index=2*/f32[8,8]) {
  %arg0.1 = f32[32,8]{1,0} parameter(0)
}
"""


def test_entry_signature_and_alias_are_read_from_the_module_text():
    params, outputs = xb.entry_signature(HLO)
    assert params == [([32, 8], "float32"), ([], "int32"), ([8, 8], "float32")]
    assert outputs == [([32, 8], "float32"), ([], "float32"), ([8, 8], "float32")]
    assert xb.input_output_alias(HLO) == {2: 2}


def test_a_dynamic_or_tuple_shape_is_refused():
    for text in ("f32[<=8]", "(f32[], s32[])", "token[]"):
        with pytest.raises(ValueError):
            xb.hlo_shape(text)


def test_parity_rule_integers_exact_floats_to_tolerance():
    ints = np.array([1, 2, 3], np.int64)
    assert xb.comparison(ints, ints)["mismatches"] == 0
    assert xb.comparison(ints + np.array([0, 0, 1]), ints)["mismatches"] == 1
    floats = np.array([1.0, 100.0], np.float32)
    assert xb.comparison(floats * (1 + 5e-5), floats)["mismatches"] == 0
    assert xb.comparison(floats * (1 + 5e-4), floats)["mismatches"] == 2


def test_bfloat16_state_may_drift_by_a_quarter_of_its_change_not_more():
    before = np.zeros(4, np.float32)
    tf_after = np.full(4, 1e-3, np.float32)  # what TF's calls did to a weight
    drifted = tf_after + np.array([1e-4, -1e-4, 0, 0], np.float32)
    assert xb.comparison(drifted, tf_after, before, bfloat16=True)["mismatches"] == 0
    assert xb.comparison(drifted, tf_after, before, bfloat16=False)["mismatches"] == 2
    # A program that left the weight alone is caught, however loose bfloat16 makes the rule.
    assert xb.comparison(before, tf_after, before, bfloat16=True)["mismatches"] == 4


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_replay_side_never_imports_tensorflow_or_rl():
    for name in ("xla_replay.py", "xla_bundle.py"):
        assert not _imports(ROOT / "benchmarks" / name) & {"tensorflow", "rl"}, name
    # The command imports TF only inside `export` (a function), never at module level.
    tree = ast.parse((ROOT / "benchmarks" / "xla_programs.py").read_text())
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert all("tensorflow" not in ast.dump(n) for n in top)


def test_docs_section_is_generated_from_the_records():
    records = sorted((ROOT / "benchmarks" / "results").glob("xla_programs_*.json"))
    assert records, "no xla_programs record in benchmarks/results"
    loaded = [json.loads(p.read_text()) for p in xla_programs.ordered(records)]
    text = xla_programs.DOC.read_text(encoding="utf-8")
    section = text.split(xla_programs.BEGIN, 1)[1].split(xla_programs.END, 1)[0]
    assert section == "\n" + xla_programs.docs_section(loaded), (
        "docs/benchmarks.md's XLA programs section is stale: python3 -m "
        "benchmarks.xla_programs docs"
    )
