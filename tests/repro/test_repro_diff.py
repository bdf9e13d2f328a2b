"""rl/repro/diff.py on hand-made run dirs: each section names exactly what differs, and the eval
curves part at the first step whose eval_return_mean differs."""

from __future__ import annotations

import json
from pathlib import Path

from rl import registry
from rl.repro.diff import diff_lines
from rl.repro.run_info import read_run
from rl.utils.run_dir import manifest, write_run_files

HEADER = "env_steps,wall_seconds,eval_return_mean\n"


def _run(root: Path, override: str = "", seed: int = 0, progress: str | None = None) -> Path:
    hp = registry.get_hparams("dqn_tiny")()
    hp.override(override)
    hp.freeze()
    write_run_files(str(root), hp, manifest(seed, 0, "dqn_tiny"))
    if progress is not None:
        (root / "progress.csv").write_text(HEADER + progress)
    return root


def _edit_manifest(run_dir: Path, edit) -> None:
    path = run_dir / "manifest.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def _section(lines: list[str], title: str) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{title}: "))
    end = start + 1
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    return lines[start:end]


def test_identical_runs_differ_nowhere(tmp_path):
    a = _run(tmp_path / "a", progress="300,1.0,9.5\n600,2.0,12.0\n")
    b = _run(tmp_path / "b", progress="300,7.0,9.5\n600,9.0,12.0\n")  # wall time aside
    lines = diff_lines(read_run(str(a)), read_run(str(b)))
    assert _section(lines, "hparams") == ["hparams: same"]
    assert _section(lines, "seed and command") == ["seed and command: same (seed 0)"]
    assert _section(lines, "tf determinism") == ["tf determinism: same"]
    assert lines[-1] == "eval curves: identical at all 2 evaluations (to step 600)"


def test_each_section_names_what_differs(tmp_path):
    a = _run(tmp_path / "a", progress="300,1.0,9.5\n600,2.0,12.0\n900,3.0,20.0\n")
    b = _run(
        tmp_path / "b",
        "gamma=0.9,batch_size=32",
        seed=1,
        progress="300,1.0,9.5\n600,2.0,12.5\n900,3.0,20.0\n",
    )

    def edit_b(data):
        data["git"] = {**data["git"], "revision": "f" * 40, "dirty": True, "diff_sha256": "ab"}
        data["packages"] = {**data["packages"], "numpy": "0.0.1", "extra-pkg": "1.0"}
        data["devices"] = data["devices"] + [{"name": "/physical_device:GPU:0", "type": "GPU"}]
        data["tf_determinism"]["op_determinism"] = not data["tf_determinism"]["op_determinism"]

    def edit_a(data):  # a clean tree, whatever state this checkout is in
        data["git"] = {"revision": "e" * 40, "dirty": False, "diff_sha256": None}

    _edit_manifest(a, edit_a)
    _edit_manifest(b, edit_b)
    ma = json.loads((a / "manifest.json").read_text())
    lines = diff_lines(read_run(str(a)), read_run(str(b)))
    assert _section(lines, "hparams") == [
        "hparams: 2 differences",  # in the set's key order
        "  gamma: 0.99 -> 0.9",
        "  batch_size: 16 -> 32",
    ]
    assert _section(lines, "seed and command") == [
        "seed and command: 1 difference",
        "  seed: 0 -> 1",
    ]
    assert _section(lines, "code") == [
        "code: 3 differences",
        f"  git revision: {'e' * 40} -> {'f' * 40}",
        "  git dirty: False -> True",
        "  git diff_sha256: (absent) -> ab",
    ]
    assert _section(lines, "packages") == [
        "packages: 2 differences",
        "  extra-pkg: (absent) -> 1.0",
        f"  numpy: {ma['packages']['numpy']} -> 0.0.1",
    ]
    op = ma["tf_determinism"]["op_determinism"]
    assert _section(lines, "tf determinism") == [
        "tf determinism: 1 difference",
        f"  op_determinism: {op} -> {not op}",
    ]
    assert _section(lines, "devices")[1] == "  devices: CPU:0 -> CPU:0, GPU:0"
    assert lines[-1] == "eval curves: part at step 600 (eval_return_mean 12.0 -> 12.5)"


def test_eval_curves_part_where_only_one_run_evaluated(tmp_path):
    a = _run(tmp_path / "a", progress="300,1.0,9.5\n")
    b = _run(tmp_path / "b", progress="300,1.0,9.5\n600,2.0,12.0\n")
    c = _run(tmp_path / "c")
    assert diff_lines(read_run(str(a)), read_run(str(b)))[-1] == (
        "eval curves: part at step 600 (only B evaluated there)"
    )
    assert diff_lines(read_run(str(a)), read_run(str(c)))[-1] == (
        f"eval curves: not compared ({c} has no progress.csv)"
    )
