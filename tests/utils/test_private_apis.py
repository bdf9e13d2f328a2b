"""rl.utils.private_apis: the version check in front of other libraries' internals."""

from __future__ import annotations

import sys
import tomllib
import types
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from rl.errors import UserError
from rl.utils import private_apis

ROOT = Path(__file__).resolve().parents[2]


def test_release_reads_the_leading_numbers():
    assert private_apis.release("2.21.0") == (2, 21, 0)
    assert private_apis.release("2.21.0rc1") == (2, 21, 0)
    assert private_apis.release("3.15.1.dev20260101") == (3, 15, 1)
    assert private_apis.release("2.60") == (2, 60)


@pytest.mark.parametrize("version", ["2.20.0", "2.20.5", "2.21.0", "2.21.9rc0"])
def test_supported_tensorflow_versions_pass(version):
    private_apis.check_version("tensorflow", version)


@pytest.mark.parametrize("version", ["2.19.1", "2.22.0", "2.22.0rc0", "3.0.0"])
def test_other_tensorflow_versions_fail_in_one_line_naming_the_supported_ones(version):
    with pytest.raises(UserError) as caught:
        private_apis.check_version("tensorflow", version)
    message = str(caught.value)
    assert "\n" not in message
    assert ">=2.20,<2.22" in message and f"tensorflow {version} is installed" in message


def test_ray_is_supported_in_its_tested_minor_only():
    private_apis.check_version("ray", "2.60.3")
    for version in ("2.59.0", "2.61.0"):
        with pytest.raises(private_apis.UnsupportedVersion, match=r">=2\.60,<2\.61"):
            private_apis.check_version("ray", version)


def test_require_checks_the_imported_module(monkeypatch):
    monkeypatch.setitem(private_apis.SUPPORTED, "fakelib", ("1.2", "2"))
    monkeypatch.setitem(sys.modules, "fakelib", types.SimpleNamespace(__version__="2.0.1"))
    with pytest.raises(private_apis.UnsupportedVersion, match="fakelib 2.0.1 is installed"):
        private_apis.require("fakelib")


def test_the_installed_versions_are_supported():
    # What .venv (and the TPU image's TF in .venv-tpu-compat) runs must pass its own check.
    for name in private_apis.SUPPORTED:
        private_apis.check_version(name, metadata.version(name))


def test_pyproject_declares_the_supported_versions():
    # pip then never installs a version whose internals rl does not know.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    lines = project["dependencies"] + extras["ray"] + extras["robotics"]
    declared = {Requirement(line).name: Requirement(line).specifier for line in lines}
    for name, (low, high) in private_apis.SUPPORTED.items():
        distribution = name.replace("_", "-")  # gymnasium_robotics: gymnasium-robotics
        assert declared[distribution] == SpecifierSet(f">={low},<{high}"), name
