"""`train.py --hparams SET --winner DIR/winner.json` trains a study's winner from the study's
directory: the set, then the winner's values, then `--hparam_override`. A bad `--winner` is a
user mistake: exit 2, one line on stderr, nothing written."""

from __future__ import annotations

import json

import pytest

import train
from rl import registry
from rl.hparams import HParams

WINNER = {"hparams_set": "ppo_tiny", "hparam_override": "lr=0.00123,n_epochs=3", "trial": 7}


def write_winner(directory, winner: dict = WINNER):
    path = directory / "winner.json"
    path.write_text(json.dumps(winner))
    return path


def test_the_winner_trains_from_the_study_dir(tmp_path, capsys):
    winner = write_winner(tmp_path)
    out = tmp_path / "run"
    flags = ["--hparams", "ppo_tiny", "--winner", str(winner), "--output_dir", str(out)]
    assert train.main([*flags, "--hparam_override", "n_epochs=1"]) == 0
    saved = HParams.from_json((out / "run_0" / "hparams.json").read_text())
    changed = [line.split(":")[0] for line in saved.diff(registry.get_hparams("ppo_tiny")())]
    assert sorted(changed) == ["lr", "n_epochs"]
    assert saved.lr.value(0) == pytest.approx(0.00123)
    assert saved.n_epochs == 1  # --hparam_override comes after the winner
    manifest = json.loads((out / "run_0" / "manifest.json").read_text())
    assert manifest["hparams_set"] == "ppo_tiny"


def test_show_hparams_names_the_winner_as_the_source(tmp_path, capsys):
    winner = write_winner(tmp_path)
    flags = ["--hparams", "ppo_tiny", "--winner", str(winner), "--hparam_override", "n_epochs=1"]
    assert train.main([*flags, "--show_hparams"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert lines["lr"].split("<- ")[1].startswith("--winner (set ppo_tiny: ")
    assert lines["n_epochs"].split("<- ")[1].startswith("--hparam_override (set ppo_tiny: ")


def bad_winner_commands(tmp_path) -> dict[str, tuple[list, list[str]]]:
    """{case: (train.py flags, words of the one stderr line)}."""
    not_json = tmp_path / "not_json.json"
    not_json.write_text("lr=0.1\n")
    no_override = tmp_path / "no_override.json"
    no_override.write_text(json.dumps({"hparams_set": "ppo_tiny"}))
    winner = write_winner(tmp_path)
    renamed_key = tmp_path / "renamed_key.json"
    renamed_key.write_text(json.dumps({**WINNER, "hparam_override": "learning_rate=0.1"}))
    gke = ["--sys", "gke", "--image", "rl:test", "--dry_run"]
    return {
        "missing": (
            ["--hparams", "ppo_tiny", "--winner", tmp_path / "nope.json"],
            ["nope.json: no such file", "winner.json"],
        ),
        "directory": (["--hparams", "ppo_tiny", "--winner", tmp_path], ["no such file"]),
        "not_json": (
            ["--hparams", "ppo_tiny", "--winner", not_json],
            ["is not a winner.json", "hparams_set and hparam_override"],
        ),
        "no_override": (["--hparams", "ppo_tiny", "--winner", no_override], ["not a winner"]),
        "renamed_key": (
            ["--hparams", "ppo_tiny", "--winner", renamed_key],
            ["renamed_key.json: --hparam_override:", "learning_rate"],
        ),
        "other_set": (
            ["--hparams", "a2c_tiny", "--winner", winner],
            ["tuned on hparams set 'ppo_tiny', not 'a2c_tiny'", "give --hparams ppo_tiny"],
        ),
        "local_file_for_pods": (
            ["--hparams", "ppo_tiny", "--winner", winner, *gke],
            ["the Pods cannot read it", "gs://"],
        ),
    }


CASES = ["missing", "directory", "not_json", "no_override", "renamed_key", "other_set"]
CASES += ["local_file_for_pods"]


@pytest.mark.parametrize("case", CASES)
def test_a_bad_winner_is_one_line_and_exit_2(case, tmp_path, capsys):
    flags, words = bad_winner_commands(tmp_path)[case]
    out = tmp_path / "out"
    capsys.readouterr()
    assert train.main([*map(str, flags), "--output_dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("train.py: error: --winner "), err
    for word in words:
        assert word in err, err
    assert not out.exists()
