"""Fixtures of the launcher tests (`--sys tpu`, `--sys gke`): a recording API server with
$KUBECONFIG pointing at it, a guard that no launch trains here, and train.main in-process.

A test module imports the fixture functions (pytest finds fixtures in a module's namespace);
they are registered under short names (`api`, `no_local_training`) so that a test's argument
does not shadow the import. Not a second conftest.py: without packages, pytest imports every
conftest.py as the module `conftest`, and `from conftest import ...` elsewhere would break.
"""

from __future__ import annotations

import pytest
from conftest import stderr_lines
from kube_recorder import RecordingApiServer

import train
from rl import loop, test_mode


@pytest.fixture(name="no_local_training")
def no_local_training_fixture(monkeypatch):
    """A launcher never trains here; reaching the local training loop fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("a Kubernetes launch reached the local training loop")

    monkeypatch.setattr(loop, "train", refuse)
    monkeypatch.setattr(test_mode, "play_and_report", refuse)


@pytest.fixture(name="api")
def api_fixture(tmp_path, monkeypatch):
    """A running recorder and $KUBECONFIG pointing at it (context `recorder`)."""
    with RecordingApiServer() as server:
        monkeypatch.setenv("KUBECONFIG", str(server.write_kubeconfig(tmp_path / "kubeconfig")))
        yield server


def run_train(capsys, argv: list[str]) -> tuple[int, str, list[str]]:
    """train.main(argv) in-process: (exit status, stdout, stderr lines that are not TF's)."""
    capsys.readouterr()
    status = train.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, stderr_lines(err)


def pod_containers(job: dict) -> list[dict]:
    return job["spec"]["template"]["spec"]["containers"]


def assert_refused(capsys, api: RecordingApiServer, argv: list[str], words: list[str]) -> None:
    """A user mistake: exit 2 and one stderr line holding every word, nothing sent or printed."""
    status, out, err = run_train(capsys, argv)
    assert status == 2, (out, err)
    assert len(err) == 1, err
    assert err[0].startswith("train.py: error: ")
    for word in words:
        assert word in err[0], (word, err[0])
    assert api.requests == []
    assert out == ""
