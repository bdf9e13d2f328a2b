"""A study killed at any moment of its end is finished by the same command, with the result of an
uninterrupted study (in-process: each kill is an exception raised where the process would have
died, so the disk holds what a kill there leaves). PBT: while the members' last checkpoints are
written, before the winner is chosen, during its fresh-seed re-run, before winner.json; a plain
study: during the fresh-seed re-runs. And a publication cut short leaves the package importable.
"""

from __future__ import annotations

import json
import resource
import signal

import pytest
import tensorflow as tf

from rl.tune import cli, pbt, winners
from rl.tune.objective import TrialConfig
from rl.utils.checkpoint import CheckpointStore

# ppo_tf_tiny: 256 env steps, an evaluation and a checkpoint every 128; a PBT round at 128.
PBT = ["--hparams", "ppo_tf_tiny", "--space", "ppo", "--keys", "lr,ent_coef", "--last_k", "1"]
PBT += ["--population", "4", "--pbt", "--pbt_interval", "128", "--fresh_seeds", "1"]
# One trial, re-run on two fresh seeds (one compiled program).
PLAIN = ["--hparams", "ppo_tf_tiny", "--space", "ppo", "--keys", "lr", "--last_k", "1"]
PLAIN += ["--seeds_per_trial", "1", "--trials", "1", "--fresh_seeds", "2"]


class Killed(BaseException):
    """Where the process dies: nothing after it runs (BaseException: no handler takes it)."""


class Kills:
    """Raises `Killed` at each of `points` in turn, where `point` is called with its name."""

    def __init__(self, *points: str) -> None:
        self.points = list(points)

    def point(self, name: str) -> None:
        if self.points and self.points[0] == name:
            self.points.pop(0)
            raise Killed(name)


def _install(monkeypatch, kills: Kills) -> None:
    """Kill points at the end of a study: a checkpoint of a run dir about to be written
    (`save:<run dir>`), the PBT winner about to be recorded, winner.json about to be written."""
    save, write_lineage = CheckpointStore.save, pbt.Lineage.write
    write_winner_json = winners.write_winner_json

    def checkpoint(store, step, *args, **kwargs):
        kills.point(f"save:{store.directory.split('/')[-2]}@{step}")
        return save(store, step, *args, **kwargs)

    def lineage(self, winner=None):
        if winner is not None:
            kills.point("winner chosen")
        write_lineage(self, winner)

    def winner_json(*args, **kwargs):
        kills.point("winner.json")
        write_winner_json(*args, **kwargs)

    monkeypatch.setattr(CheckpointStore, "save", checkpoint)
    monkeypatch.setattr(pbt.Lineage, "write", lineage)
    monkeypatch.setattr(winners, "write_winner_json", winner_json)


def _run_until_done(argv: list[str], kills: Kills) -> int:
    """The same command again after each kill, as a user would; returns how many kills."""
    killed = 0
    while True:
        try:
            assert cli.main(argv) == 0
            return killed
        except Killed:
            killed += 1


def _results(out) -> dict:
    return {name: json.loads((out / name).read_text()) for name in ("lineage.json", "winner.json")
            if (out / name).exists()}  # fmt: skip


# A PBT of 4 members and its fresh-seed re-run, uninterrupted, then killed 4 times and run
# again each time: ~30 s of CPU (three more builds of a program than one study). CI covers the
# same with tests/test_loop.py's population resume (default tier) and a SIGKILL late in a study
# (tests/tune/test_tune_pbt_resume.py, e2e tier).
@pytest.mark.slow
def test_a_pbt_study_killed_at_each_point_of_its_end_finishes_as_uninterrupted(
    capsys, monkeypatch, tmp_path
):
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    assert cli.main([*PBT, "--output_dir", str(reference)]) == 0
    winner = json.loads((reference / "winner.json").read_text())["trial"]
    kills = Kills(
        "save:member_1@256",  # member 0 has its last checkpoint, members 1-3 not yet
        "winner chosen",  # every member complete, the winner not recorded
        f"save:trial_{winner:04d}_seed_10000@256",  # the re-run evaluated, not checkpointed
        "winner.json",
    )
    _install(monkeypatch, kills)
    assert _run_until_done([*PBT, "--output_dir", str(killed)], kills) == 4
    assert capsys.readouterr().err == ""
    assert _results(killed) == _results(reference)
    assert _results(reference)["lineage.json"]["winner"] == winner


# A trial and its re-run on two fresh seeds, uninterrupted, then killed twice and run again
# each time: ~15 s of CPU.
@pytest.mark.slow
def test_a_plain_study_killed_during_its_fresh_seed_runs_finishes_as_uninterrupted(
    capsys, monkeypatch, tmp_path
):
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    assert cli.main([*PLAIN, "--output_dir", str(reference)]) == 0
    # The re-run killed after seed 10000's last checkpoint, before seed 10001's.
    kills = Kills("save:trial_0000_seed_10001@256", "winner.json")
    _install(monkeypatch, kills)
    assert _run_until_done([*PLAIN, "--output_dir", str(killed)], kills) == 2
    assert capsys.readouterr().err == ""
    ours, theirs = _results(killed)["winner.json"], _results(reference)["winner.json"]
    assert ours == theirs and len(ours["fresh_scores"]) == 2


def test_a_publication_cut_short_leaves_every_tuned_module_whole(tmp_path):
    """`import rl` imports every module of the tuned dir: a kill while one is written must not
    leave it cut short (a file-size limit stops the write where a kill could)."""
    winner = winners.FreshScore(3, 40.0, {"lr": 0.001, "ent_coef": 0.01}, (38.0, 42.0))
    config = TrialConfig("ppo_tf_tiny", "", 256, (0,), 1, str(tmp_path))
    tuned = tmp_path / "tuned"

    def publish():
        return winners.write_tuned_module(winner, config, "s", "sqlite:///x", [10000], 256, tuned)

    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, limit[1]))
    try:
        with pytest.raises((OSError, tf.errors.OpError)):  # the file systems' own errors
            publish()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limit)
        signal.signal(signal.SIGXFSZ, previous)
    for module in tuned.glob("*.py"):
        compile(module.read_text(), str(module), "exec")  # whole, or not there
    path = publish()  # the same command again
    assert "fresh-seed score 40.00 ± 2.00" in " ".join(path.read_text().split())
    assert "ppo_tf_tiny_tuned," in (tuned / "__init__.py").read_text()
