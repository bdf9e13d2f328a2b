"""The new-algorithm example of docs/rollout_api.md, run as written: it must learn something."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# e2e: the documented script run as a user runs it
pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def test_documented_algorithm_runs_and_improves_on_cartpole(tmp_path):
    doc = (ROOT / "docs" / "rollout_api.md").read_text()
    example = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    assert "collect_steps" in example and len(example.strip().splitlines()) <= 50
    (tmp_path / "example.py").write_text(example)
    proc = subprocess.run(
        [sys.executable, "example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    first, last = map(float, re.search(r"first 20 episodes: (\S+), last 20: (\S+)", proc.stdout)
                      .groups())  # fmt: skip
    # Measured 18.9 -> 71.2 (random play on CartPole lasts ~20 steps).
    assert last > 2 * first, proc.stdout
    # The doc quotes the output it printed.
    assert proc.stdout.strip().splitlines()[-1] in doc
