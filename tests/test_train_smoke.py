"""Every registered `*_tiny` hparams set runs train.py end to end in a temp dir (`SLOW_SETS`
in the slow tier, each with the set that runs its agent class in the default one).

Per set, a training run as a process runs it (shared with other tests through the `trained_run`
fixture, and trained in the background from the session's start; `--copies 2` for one set per
engine: see tests/conftest.py) whose stderr must be empty, then `--training False
--test_episodes 3` in-process; for one set per engine (`AGAIN_SETS`), the same command again
(already complete, nothing changes).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import tensorflow as tf
from conftest import COPIES_SETS, describe, repository_agents, tree_hashes

import rl
import train
from rl import registry
from rl.hparams import HParams
from rl.hparams.compiled_path import runs_compiled

TINY_SETS = sorted(name for name in registry.hparams.names() if name.endswith("_tiny"))
# The same command on a finished run is answered in rl/loop.py before any engine or agent is
# built (`Run.already_complete`), so it cannot depend on the agent: one set per engine a tiny
# set trains on (driver, compiled) is enough, and saves a train.py process per other set.
AGAIN_SETS = {
    next(name for name in TINY_SETS if runs_compiled(registry.get_hparams(name)().env) == compiled)
    for compiled in (False, True)
}
CSV_COLUMNS = {"env_steps", "wall_seconds", "eval_return_mean", "eval_return_std"}
# Sets whose run the default tier leaves to the slow one (~8 CPU-seconds each): their agent
# class, env kind and engine run here through another set, named with the reason.
SLOW_SETS = {
    "c51_tiny": "rainbow_tiny runs C51's distributional head with NoisyNet, PER and n-step",
    "noisy_dqn_tiny": "rainbow_tiny runs NoisyNet exploration",
    "ddpg_tiny": "td3_tiny runs the same class (DDPG is TD3 with its tricks off by hparams)",
    "ppo_mujoco_tiny": "sac_mujoco_tiny runs MuJoCo through train.py; ppo_tiny runs PPO",
    "sac_tiny": "sac_mujoco_tiny runs SAC",
    "dqn_legal_moves_tiny": "ppo_minigrid_tiny runs packed observations through train.py, and "
    "tests/agents/test_action_masking.py keeps every step legal in process",
}

# One line of stderr that a tiny run may print (a regex, matched at the start of the line), and
# why that is right. Empty: no tiny set may write to stderr at all.
ALLOWED_STDERR: dict[str, str] = {}


def unexpected_lines(lines: list[str]) -> list[str]:
    """The non-empty lines that no `ALLOWED_STDERR` pattern matches."""
    allowed = [re.compile(pattern) for pattern in ALLOWED_STDERR]
    return [line for line in lines if line.strip() and not any(p.match(line) for p in allowed)]


def test_there_are_tiny_sets():
    assert rl.__version__
    assert "dqn_tiny" in TINY_SETS
    assert AGAIN_SETS == {"a2c_tiny", "dqn_tf_tiny"}  # one on each engine
    assert AGAIN_SETS <= COPIES_SETS <= set(TINY_SETS)  # the runs they check have two copies


def test_the_slow_sets_are_tiny_sets_and_leave_every_agent_class_in_the_default_tier():
    assert set(SLOW_SETS) <= set(TINY_SETS)
    default = [registry.get_hparams(name)() for name in TINY_SETS if name not in SLOW_SETS]
    classes = {registry.get_agent(hp.agent) for hp in default}
    assert {registry.get_agent(agent) for agent in repository_agents()} <= classes


def test_every_registered_agent_has_a_tiny_set():
    # The sets above are found in the registry, so a new agent is smoke-tested as soon as it
    # has a `*_tiny` set; this makes that set required rather than forgotten.
    tiny_agents = {registry.get_hparams(name)().agent for name in TINY_SETS}
    missing = sorted(set(repository_agents()) - tiny_agents)
    assert not missing, f"agents without a *_tiny hparams set (add one): {missing}"


def _events(event_dir: Path) -> dict[str, str]:
    """{tag: plugin name} of every summary value in the event files of `event_dir`."""
    files = sorted(event_dir.glob("events.out.tfevents.*"))
    assert files, f"no event file in {event_dir}"
    tags: dict[str, str] = {}
    for path in files:
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                tags[value.tag] = value.metadata.plugin_data.plugin_name
    return tags


def _check_run_dir(run_dir: Path, hparams_set: str, seed: int) -> None:
    expected = registry.get_hparams(hparams_set)()

    saved = HParams.from_json((run_dir / "hparams.json").read_text())
    assert saved == expected, "\n".join(expected.diff(saved))

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["seed"] == seed
    assert "revision" in manifest["git"]
    assert isinstance(manifest["command_line"], list)
    assert "train.py" in " ".join(manifest["command_line"])
    assert hparams_set in manifest["command_line"]
    assert manifest["packages"]["tensorflow"] == tf.__version__
    assert manifest["evaluation_protocol"] == saved.eval.to_dict()

    with open(run_dir / "progress.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert CSV_COLUMNS <= set(reader.fieldnames or ()), reader.fieldnames
        rows = list(reader)
    assert rows, "progress.csv has no rows"
    steps = [int(row["env_steps"]) for row in rows]
    assert steps == sorted(set(steps)), f"env_steps not increasing: {steps}"
    assert steps[-1] == expected.train_steps
    for row in rows:
        float(row["eval_return_mean"]), float(row["eval_return_std"])

    pointer = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    assert pointer["step"] == expected.train_steps
    step_dir = run_dir / "checkpoints" / pointer["directory"]
    assert step_dir.is_dir()
    assert (step_dir / "tf.index").is_file() and (step_dir / "numpy.npz").is_file()
    trainer_state = json.loads((step_dir / "trainer.json").read_text())
    assert trainer_state["env_steps"] == expected.train_steps
    kept = [p for p in (run_dir / "checkpoints").iterdir() if p.name.startswith("step_")]
    assert len(kept) <= expected.keep_checkpoints

    train_tags = _events(run_dir / "train")
    wanted = {"episode_return", "loss", "learning_rate"}
    if "epsilon" in expected.keys():
        wanted.add("epsilon")
    for tag in wanted:
        assert train_tags.get(tag) == "scalars", f"train/{tag} missing: {sorted(train_tags)}"
    assert train_tags.get("_hparams_/session_start_info") == "hparams", sorted(train_tags)
    eval_tags = _events(run_dir / "eval")
    for tag in ("return_mean", "return_std"):
        assert eval_tags.get(tag) == "scalars", f"eval/{tag} missing: {sorted(eval_tags)}"


@pytest.mark.parametrize(
    "hparams_set",
    [pytest.param(s, marks=pytest.mark.slow) if s in SLOW_SETS else s for s in TINY_SETS],
)
def test_tiny_set_end_to_end(hparams_set, trained_run, capsys):
    output_dir, args, proc = trained_run(hparams_set)
    assert proc.returncode == 0, describe(proc)
    # What a user of train.py reads on stderr is errors: a TF warning there ("AutoGraph could
    # not transform ...", a retracing warning, a deprecation) is a bug of ours or an entry of
    # ALLOWED_STDERR with its reason. The run wrote to real file descriptors (C++ logs, Python
    # warnings under Python's default filters and TF's log records all reach them).
    assert not unexpected_lines(proc.stderr.splitlines()), describe(proc)
    copies = range(2 if hparams_set in COPIES_SETS else 1)
    assert sorted(p.name for p in output_dir.iterdir()) == [f"run_{i}" for i in copies]
    for i in copies:
        _check_run_dir(output_dir / f"run_{i}", hparams_set, seed=i)

    # Read-only commands on the finished run dir (none may write a checkpoint): test mode and,
    # for AGAIN_SETS, the same command again.
    before = {i: tree_hashes(output_dir / f"run_{i}" / "checkpoints") for i in copies}
    if hparams_set in AGAIN_SETS:  # already complete: exit 0, nothing written
        capsys.readouterr()
        assert train.main(args) == 0
        again = capsys.readouterr().out
        for i in copies:
            assert re.search(rf"\[run_{i}\] already complete", again), again
            assert tree_hashes(output_dir / f"run_{i}" / "checkpoints") == before[i]
        assert "resuming" not in again

    # Test mode: 3 episode rows and a mean ± std line.
    test_args = ["--hparams", hparams_set, "--output_dir", str(output_dir), "--training", "False"]
    capsys.readouterr()
    assert train.main([*test_args, "--test_episodes", "3"]) == 0
    tested = capsys.readouterr().out
    rows = re.findall(r"^\s*(\d+)\s+(-?\d+\.\d+)\s+(\d+)\s*$", tested, re.MULTILINE)
    assert [int(r[0]) for r in rows] == [0, 1, 2], tested
    summary = re.search(r"\[run_0\] test return (-?\d+\.\d+) ± (\d+\.\d+) over 3 episodes", tested)
    assert summary, tested
    returns = [float(r[1]) for r in rows]
    assert float(summary.group(1)) == pytest.approx(sum(returns) / 3, abs=0.01)
    assert "run_1" not in tested  # --copies defaults to 1
    assert tree_hashes(output_dir / "run_0" / "checkpoints") == before[0]


def test_test_mode_plays_with_the_evaluation_protocol_of_the_override(trained_run, capsys):
    # The run trained with dqn_tiny's own protocol; eval.max_episode_steps=5 cuts every test
    # episode at 5 steps (CartPole's first episodes last longer), and only eval.* keys may change.
    output_dir, _, proc = trained_run("dqn_tiny")
    assert proc.returncode == 0, describe(proc)
    args = ["--hparams", "dqn_tiny", "--output_dir", str(output_dir), "--training", "False"]
    capsys.readouterr()
    assert train.main([*args, "--hparam_override", "eval.max_episode_steps=5"]) == 0
    rows = re.findall(r"^\s*(\d+)\s+(-?\d+\.\d+)\s+(\d+)\s*$", capsys.readouterr().out, re.M)
    assert [int(r[2]) for r in rows] == [5] * 10  # --test_episodes' default
    assert train.main([*args, "--hparam_override", "lr=0.1"]) == 2
    assert "may change only eval.* keys there, not lr" in capsys.readouterr().err


def test_the_check_sees_the_autograph_warning_that_sac_tiny_printed():
    """The lines `train.py --hparams sac_tiny` wrote before `:=` left
    rl/agents/off_policy_continuous.py (TF's logging format): none is allowed."""
    printed = [
        "WARNING:tensorflow:AutoGraph could not transform <bound method "
        "OffPolicyContinuousAgent._optimizer_step of <rl.agents.sac.SAC object at 0x7f76>> and "
        "will run it as-is.",
        "Please report this to the TensorFlow team. When filing the bug, set the verbosity to "
        "10 (on Linux, `export AUTOGRAPH_VERBOSITY=10`) and attach the full output.",
        "Cause: (<gast.gast.NamedExpr object at 0x7f76>, (limit := self.grad_clip_norm()))",
        "To silence this warning, decorate the function with "
        "@tf.autograph.experimental.do_not_convert",
    ]
    assert unexpected_lines(["", *printed]) == printed


def test_list_prints_every_registry(capsys):
    capsys.readouterr()
    assert train.main(["--list"]) == 0
    out = capsys.readouterr().out
    lines = {line.split(":", 1)[0]: line for line in out.splitlines() if ":" in line}
    for kind, reg in registry.ALL.items():
        assert kind in lines, f"--list does not print {kind}:\n{out}"
        for name in reg.names():
            assert name in lines[kind], f"{kind} {name!r} missing in {lines[kind]!r}"
    for name in ("hparams", "envs", "models", "memory", "agents", "schedules", "systems"):
        assert name in lines
    assert "dqn_tiny" in lines["hparams"] and "local" in lines["systems"]
    assert lines["optimizers"] == "optimizers: adam, rmsprop, rmsprop_torch, sgd"
    assert {"dqn", "ppo"} <= set(lines["search_spaces"].split(": ", 1)[1].split(", "))
    assert "epsilon_greedy" in lines["action_functions"]
    assert "ornstein_uhlenbeck" in lines["action_functions"]
    assert {"td_huber", "td_mse", "categorical_loss"} <= set(
        lines["gradient_functions"].split(": ", 1)[1].split(", ")
    )
