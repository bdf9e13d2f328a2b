"""Where a set's values come from: parent chains observed while the factories run, sources by
comparison with the parent, and train.py's `--list` chains and `--show_hparams` output.

The expected chains and sources are read off the sets' code (rl/hparams/dqn.py,
rl/hparams/dqn_family.py, rl/hparams/qrdqn.py, rl/hparams/ddpg.py), not copied from a run.
"""

from __future__ import annotations

import os

import pytest
from conftest import stderr_lines, tree_hashes

import rl  # noqa: F401  (fills the registries)
import train
from rl import registry
from rl.hparams.inheritance import direct_parents, flat_values, parent_chain, value_sources


def test_parent_chains_follow_the_factories_calls():
    assert parent_chain("dqn") == ["dqn"]  # a root: calls base(), no registered set
    assert parent_chain("dqn_tiny") == ["dqn_tiny", "dqn"]
    # c51_cartpole = with_c51(dqn_cartpole()), dqn_cartpole = cartpole_protocol(dqn(), ...)
    assert parent_chain("c51_cartpole") == ["c51_cartpole", "dqn_cartpole", "dqn"]
    assert parent_chain("qrdqn_tiny") == ["qrdqn_tiny", "dqn_tiny", "dqn"]
    # DDPG is TD3 with its tricks off: ddpg_tiny calls td3_tiny.
    assert parent_chain("ddpg_tiny") == ["ddpg_tiny", "td3_tiny", "td3"]


def test_every_chain_ends_at_a_root_and_every_source_lies_on_it():
    for name in registry.hparams.names():
        # parent_chain follows first parents: a set calling two sets would need it extended.
        assert len(direct_parents(name)) <= 1, (name, direct_parents(name))
        chain = parent_chain(name)
        assert direct_parents(chain[-1]) == [], name
        assert len(set(chain)) == len(chain), chain
        assert set(value_sources(name).values()) <= set(chain), name


def test_sources_of_the_parent_set_pitfalls():
    sources = value_sources("c51_tiny")
    assert sources["agent"] == "c51_tiny"  # with_c51 switches the agent
    assert sources["memory"] == "dqn_tiny"  # dqn_tiny turns prioritized replay on
    assert sources["dueling"] == sources["n_step"] == "dqn_tiny"
    assert sources["double_q"] == "dqn"  # add_q_learning_keys declares it True
    assert sources["lr"] == "dqn"  # never changed below the root
    # dqn_tiny assigns env = "CartPole-v1", which dqn already has: the value is dqn's.
    assert sources["env"] == "dqn"
    # qrdqn_tiny sets double_q back to the paper's False: now it is the child's value.
    assert value_sources("qrdqn_tiny")["double_q"] == "qrdqn_tiny"
    assert flat_values(registry.get_hparams("qrdqn_tiny")())["double_q"] == "false"


def run_main(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    status = train.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_show_hparams_prints_sources_and_writes_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = tree_hashes(tmp_path)
    argv = ["--hparams", "qrdqn_tiny", "--show_hparams", "--output_dir", "runs/x"]
    argv += ["--hparam_override", "lr=0.01,n_step=1", "--train_steps", "700"]
    status, out, err = run_main(capsys, argv)
    assert status == 0 and err == "", err
    assert tree_hashes(tmp_path) == before and os.listdir(tmp_path) == []
    lines = out.splitlines()
    assert lines[0] == "hparams set qrdqn_tiny (chain: qrdqn_tiny <- dqn_tiny <- dqn)"
    rows = {line.split("=", 1)[0].strip(): line for line in lines[1:]}
    assert rows["memory"].split("<- ")[1] == "dqn_tiny"
    assert rows["double_q"].split("<- ")[1] == "qrdqn_tiny"
    assert rows["kappa"].split("<- ")[1] == "qrdqn_tiny"
    assert rows["eval.episodes"].split("<- ")[1] == "dqn_tiny"
    assert rows["n_step"].split("<- ")[1] == "--hparam_override (set dqn_tiny: 3)"
    assert rows["lr"].split("<- ")[1] == '--hparam_override (set dqn: "constant(0.001)")'
    assert rows["train_steps"].split("<- ")[1] == "--train_steps (set dqn_tiny: 600)"
    assert '"constant(0.01)"' in rows["lr"] and " 700 " in rows["train_steps"]
    # Every key of the resolved set is listed once.
    assert len(rows) == len(flat_values(registry.get_hparams("qrdqn_tiny")())) == len(lines) - 1


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--show_hparams"], ["--show_hparams needs --hparams"]),
        (["--hparams", "qrdqn_tin", "--show_hparams"], ["unknown hparams set", "qrdqn_tiny"]),
        (["--hparams", "qrdqn_tiny", "--show_hparams", "--hparam_override", "kapa=2.0"],
         ["unknown hparam 'kapa'", "kappa"]),
    ],
)  # fmt: skip
def test_show_hparams_bad_input_is_one_line(capsys, tmp_path, monkeypatch, argv, words):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_main(capsys, argv)
    lines = stderr_lines(err)
    assert status == 2 and len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    assert os.listdir(tmp_path) == []


def test_list_prints_every_sets_chain(capsys):
    status, out, err = run_main(capsys, ["--list"])
    assert status == 0 and err == ""
    chains = out.split("hparams parent chains", 1)[1].splitlines()[1:]
    assert [line.strip().split(" <- ")[0] for line in chains] == registry.hparams.names()
    assert "  qrdqn_cartpole <- dqn_cartpole <- dqn" in chains
    assert "  dqn" in chains
