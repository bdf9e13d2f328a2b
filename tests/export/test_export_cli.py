"""`python -m rl.export` as a user runs it: a SavedModel of a real run, stdout says where, stderr
stays empty; every mistake exits 2 with one line on stderr and writes nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO_ROOT, TINY_SET, describe, stderr_lines, train_env


def export(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rl.export", *map(str, args)],
        cwd=REPO_ROOT,
        env=train_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def run_dir(trained_run):
    output_dir, _, proc = trained_run(TINY_SET)
    assert proc.returncode == 0, describe(proc)
    return output_dir / "run_0"


def test_exports_a_saved_model_and_says_where(run_dir, tmp_path):
    out = tmp_path / "policy"
    proc = export(run_dir, "--output", out, "--step", "best")
    assert proc.returncode == 0, describe(proc)
    assert stderr_lines(proc.stderr) == []
    assert f"to {out} (signatures: greedy_action)" in proc.stdout
    assert (out / "saved_model.pb").is_file()
    assert (out / "assets.extra" / "metadata.json").is_file()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--format", "onnx"], "--format must be one of saved_model, tflite, got 'onnx'"),
        (["--step", "12345"], "--step 12345:"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_mistakes_exit_2_with_one_line(run_dir, tmp_path, args, says):
    out = tmp_path / "never"
    proc = export(run_dir, "--output", out, *args)
    assert proc.returncode == 2, describe(proc)
    lines = stderr_lines(proc.stderr)
    assert len(lines) == 1 and says in lines[0], lines
    assert not out.exists()


def test_a_run_without_checkpoint_and_a_non_run_dir(run_dir, tmp_path):
    empty = tmp_path / "run_0"
    empty.mkdir()
    (empty / "hparams.json").write_text((run_dir / "hparams.json").read_text())
    proc = export(empty)
    assert proc.returncode == 2, describe(proc)
    (line,) = stderr_lines(proc.stderr)
    assert "has no checkpoint to export; train it first" in line
    proc = export(tmp_path / "missing")
    assert proc.returncode == 2, describe(proc)
    (line,) = stderr_lines(proc.stderr)
    assert "is not a directory" in line
    assert not (empty / "export").exists()
