"""`python -m rl.export` as a user runs it: a SavedModel of a real run, stdout says where, stderr
stays empty; every mistake exits 2 with one line on stderr and writes nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO_ROOT, TINY_SET, describe, stderr_lines, train_env

from rl.export.__main__ import main as export_main


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


@pytest.mark.e2e  # python -m rl.export as a process: stdout, stderr, exit status
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
def test_mistakes_exit_2_with_one_line(run_dir, tmp_path, capsys, args, says):
    # In-process (the same `main` the module runs): a mistake is found before TF work.
    out = tmp_path / "never"
    assert export_main([str(run_dir), "--output", str(out), *args]) == 2
    captured = capsys.readouterr()
    lines = stderr_lines(captured.err)
    assert len(lines) == 1 and says in lines[0], lines
    assert lines[0].startswith("python -m rl.export: error: ")
    assert captured.out == ""
    assert not out.exists()


def test_a_run_without_checkpoint_and_a_non_run_dir(run_dir, tmp_path, capsys):
    empty = tmp_path / "run_0"
    empty.mkdir()
    (empty / "hparams.json").write_text((run_dir / "hparams.json").read_text())
    assert export_main([str(empty)]) == 2
    (line,) = stderr_lines(capsys.readouterr().err)
    assert "has no checkpoint to export; train it first" in line
    assert export_main([str(tmp_path / "missing")]) == 2
    (line,) = stderr_lines(capsys.readouterr().err)
    assert "is not a directory" in line
    assert not (empty / "export").exists()
