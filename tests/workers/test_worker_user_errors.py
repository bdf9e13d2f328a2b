"""--num_workers mistakes: exit status 2, ONE stderr line naming the problem and the fix,
nothing written (in-process through train.main, before any env or process starts)."""

from __future__ import annotations

import sys

import pytest
from conftest import stderr_lines, tree_hashes

import train

CASES = {
    "zero": (["--hparams", "dqn_tiny", "--num_workers", "0"], ["--num_workers", ">= 1", "0"]),
    "env_copies_do_not_split": (
        ["--hparams", "ppo_tiny", "--num_workers", "3"],
        ["num_envs=2", "3 processes", "multiple of 3", "num_envs=3"],
    ),
    "compiled_path": (
        ["--hparams", "ppo_tf_tiny", "--num_workers", "2"],
        ["--num_workers 2", "compiled path", "--num_workers 1"],
    ),
    "apex_video": (
        ["--hparams", "dqn_tiny", "--num_workers", "2", "--record_video"],
        ["--record_video", "Ape-X", "--training False --record_video True"],
    ),
    "apex_exploration": (
        [
            "--hparams",
            "dqn_tiny",
            "--num_workers",
            "2",
            "--hparam_override",
            "workers.exploration=greedy",
        ],
        ["workers.exploration", "apex, agent", "'greedy'"],
    ),  # fmt: skip
    "refresh_zero": (
        [
            "--hparams",
            "dqn_tiny",
            "--num_workers",
            "2",
            "--hparam_override",
            "workers.policy_refresh_every=0",
        ],
        ["workers.policy_refresh_every", ">= 1"],
    ),  # fmt: skip
    "ray_address_without_actors": (
        ["--hparams", "ppo_tiny", "--num_workers", "2", "--ray_address", "10.0.0.5:6379"],
        ["--ray_address", "replay agents and IMPALA", "not ppo with --num_workers 2"],
    ),
    "actor_resources_without_a_cluster": (
        ["--hparams", "dqn_tiny", "--num_workers", "2", "--actor_resources", '{"actor": 1}'],
        ["--actor_resources", "Ray cluster", "--ray_address"],
    ),
    "actor_resources_not_an_object": (
        ["--hparams", "dqn_tiny", "--num_workers", "2", "--actor_resources", "actor"],
        ["--actor_resources", "JSON object", "'actor'"],
    ),
    "negative_restarts": (
        ["--hparams", "dqn_tiny", "--num_workers", "2", "--max_actor_restarts", "-1"],
        ["--max_actor_restarts", ">= 0", "-1"],
    ),
    "negative_actor_wait_timeout": (
        ["--hparams", "dqn_tiny", "--num_workers", "2", "--actor_wait_timeout", "-1"],
        ["--actor_wait_timeout", ">= 0", "0: wait without end", "got -1"],
    ),
    "actor_wait_timeout_not_finite": (
        ["--hparams", "impala_tiny", "--num_workers", "2", "--actor_wait_timeout", "inf"],
        ["--actor_wait_timeout", ">= 0", "got inf"],
    ),
    "actor_wait_timeout_not_a_number": (
        ["--hparams", "dqn_tiny", "--num_workers", "2", "--actor_wait_timeout", "10m"],
        ["--actor_wait_timeout", "invalid float value", "'10m'"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_num_workers_mistakes_are_one_line(case, capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    argv, keywords = CASES[case]
    out = tmp_path / "out"
    before = tree_hashes(tmp_path)
    capsys.readouterr()
    status = train.main([*argv, "--output_dir", str(out)])
    _, err = capsys.readouterr()
    lines = stderr_lines(err)
    assert status == 2 and len(lines) == 1, err
    assert lines[0].startswith("train.py: error: ")
    for word in keywords:
        assert word in lines[0], f"{word!r} not in {lines[0]!r}"
    assert tree_hashes(tmp_path) == before and not out.exists()


@pytest.mark.parametrize("hparams_set", ["dqn_tiny", "impala_tiny"])
def test_ray_actors_without_ray_installed_name_the_extra(
    hparams_set, capsys, tmp_path, monkeypatch
):
    # `pip install -e .` without the `ray` extra: a None entry in sys.modules is how Python
    # spells a module that cannot be imported (find_spec answers None, `import ray` fails).
    monkeypatch.setitem(sys.modules, "ray", None)
    out = tmp_path / "out"
    capsys.readouterr()
    status = train.main(["--hparams", hparams_set, "--num_workers", "2", "--output_dir", str(out)])
    lines = stderr_lines(capsys.readouterr().err)
    assert status == 2 and len(lines) == 1, lines
    for word in ("--num_workers 2", "Ray is not installed", "`ray` extra", "./setup.sh"):
        assert word in lines[0], f"{word!r} not in {lines[0]!r}"
    assert not out.exists()
