"""manifest.json says what a run was made with (rl/utils/run_dir.py, rl.utils.repro_facts.py):
every key is there, the git dirty flag follows tracked files only, the hparams changes and
overrides are the ones given, and a resume records what changed since the first start."""

from __future__ import annotations

import json
import subprocess
from importlib import metadata
from pathlib import Path

import pytest

from rl import registry
from rl.cli import build_parser, overrides_as_given
from rl.utils.repro_facts import git_state, installed_packages
from rl.utils.run_dir import hparams_changes, manifest, write_run_files

MANIFEST_KEYS = {
    "hparams_set",
    "seed",
    "copy_index",
    "command_line",
    "overrides",
    "git",
    "python",
    "packages",
    "tf_determinism",
    "devices",
    "cpu",
    "host",
    "started_unix",
    "evaluation_protocol",
    "hparams_changes",
    "env",
}


def _hparams(override: str = ""):
    hp = registry.get_hparams("dqn_tiny")()
    hp.override(override)
    hp.freeze()
    return hp


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.py").write_text("x = 1\n")
    _git(repo, "add", "a.py")
    _git(repo, "commit", "-qm", "first")
    return repo


def test_git_dirty_flag_flips_when_a_tracked_file_changes(repo):
    clean = git_state(str(repo))
    assert len(clean["revision"]) == 40
    assert clean["dirty"] is False and clean["diff_sha256"] is None
    assert clean["untracked_files"] == 0

    (repo / "notes.txt").write_text("untracked\n")  # untracked: not dirty (git describe --dirty)
    untracked = git_state(str(repo))
    assert untracked["dirty"] is False and untracked["untracked_files"] == 1
    (repo / "pkg").mkdir()  # asked from a subdirectory, as rl/utils/ asks: the whole tree
    assert git_state(str(repo / "pkg"))["untracked_files"] == 1

    (repo / "a.py").write_text("x = 2\n")
    dirty = git_state(str(repo))
    assert dirty["dirty"] is True and dirty["revision"] == clean["revision"]
    assert len(dirty["diff_sha256"]) == 64
    (repo / "a.py").write_text("x = 3\n")  # another edit: another hash
    assert git_state(str(repo))["diff_sha256"] != dirty["diff_sha256"]

    (repo / "a.py").write_text("x = 1\n")
    assert git_state(str(repo))["dirty"] is False


def test_git_state_outside_a_git_tree_is_all_none(tmp_path):
    assert git_state(str(tmp_path)) == {
        "revision": None,
        "dirty": None,
        "diff_sha256": None,
        "untracked_files": None,
    }


def test_manifest_has_every_key(tmp_path):
    write_run_files(str(tmp_path), _hparams(), manifest(3, 1, "dqn_tiny"))
    data = json.loads((tmp_path / "manifest.json").read_text())
    assert set(data) == MANIFEST_KEYS
    assert data["seed"] == 3 and data["copy_index"] == 1
    assert data["packages"]["tensorflow"] == metadata.version("tensorflow")
    assert data["packages"]["numpy"] == metadata.version("numpy")
    assert set(data["tf_determinism"]) == {
        "op_determinism",
        "intra_op_threads",
        "inter_op_threads",
        "env",
    }
    assert "TF_DETERMINISTIC_OPS" in data["tf_determinism"]["env"]
    assert {"name": "/physical_device:CPU:0", "type": "CPU"} in data["devices"]
    assert set(data["cpu"]) == {"model", "machine", "count"}
    assert data["env"]["id"] == "CartPole-v1"
    assert data["env"]["source"] == "gymnasium"
    assert data["env"]["version"] == 1
    assert data["env"]["entry_point"] == "gymnasium.envs.classic_control.cartpole:CartPoleEnv"
    assert data["hparams_changes"] == {}  # the registered set, unchanged


def test_full_freeze_lists_every_distribution():
    names = {d.metadata["Name"].lower().replace("_", "-") for d in metadata.distributions()}
    assert set(installed_packages()) == names


def test_hparams_changes_name_set_value_and_run_value():
    changes = hparams_changes("dqn_tiny", _hparams("lr=0.01,eval.episodes=7"))
    assert changes == {
        "eval.episodes": {"set": 2, "run": 7},
        "lr": {"set": "constant(0.001)", "run": "constant(0.01)"},
    }
    assert hparams_changes("no_such_set", _hparams()) is None


def test_overrides_as_given_from_a_train_py_command_line():
    argv = ["--hparams", "dqn_tiny", "--hparam_override", "lr=0.01,gamma=0.9"]
    argv += ["--train_steps", "500", "--output_dir", "runs/x"]
    given = overrides_as_given(build_parser().parse_args(argv))
    assert given == {"hparam_override": "lr=0.01,gamma=0.9", "train_steps": 500}
    assert overrides_as_given(build_parser().parse_args(["--hparams", "dqn_tiny"])) == {}
    assert manifest(0, 0, "dqn_tiny")["overrides"] is None  # not started by train.py
    assert manifest(0, 0, "dqn_tiny", given)["overrides"] == given


def test_a_resume_records_the_keys_that_changed(tmp_path):
    first = manifest(0, 0, "dqn_tiny")
    write_run_files(str(tmp_path), _hparams(), first)
    again = {**manifest(0, 0, "dqn_tiny"), "host": "other-host"}
    write_run_files(str(tmp_path), _hparams("train_steps=900"), again)
    data = json.loads((tmp_path / "manifest.json").read_text())
    assert data["host"] == first["host"]  # the first start is kept
    (resume,) = data["resumed"]
    assert resume["changed"] == {
        "host": {"first": first["host"], "now": "other-host"},
        "hparams_changes.train_steps": {"first": None, "now": {"set": 600, "run": 900}},
    }
