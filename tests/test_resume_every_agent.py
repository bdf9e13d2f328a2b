"""Exact resume for every registered agent: a run stopped between two scheduled checkpoints and
continued equals an uninterrupted one bit for bit (tests/test_resume.py does the `kill -9`
version for DQN; tests/test_preemption.py a real SIGTERM at a random step).

The stop is off `checkpoint_every`'s schedule, as a SIGTERM's is: its checkpoint must hold the
running episodes (the uninterrupted run cuts none there), while the scheduled checkpoint before it
cuts them in both runs. The uninterrupted run is the set's shared run (`trained_run`), which
tests/test_train_smoke.py checks too: one training fewer per agent.

This caught critics that were silently missing from checkpoints (layers kept in a Python list
inside a Keras model are invisible to tf.train.Checkpoint).
"""

import json

import numpy as np
import pytest
import tensorflow as tf
from conftest import repository_agents

import rl  # noqa: F401  (fills the registries)
import train
from rl import registry
from rl.utils.checkpoint import read_numpy_state

# Every registered agent runs here through its `<agent>_tiny` set, found in the registry: a new
# agent is covered the day it is registered. The only agents left out, each for a reason the
# tests below check:
EXCLUDED = {
    # tests/test_resume.py SIGKILLs a dqn_tiny run after a checkpoint and checks the resumed
    # run bit for bit (the harder version of this test).
    "dqn": "covered by tests/test_resume.py",
    # DDPG is the TD3 class with its tricks switched off by hparams (rl/hparams/ddpg.py): the
    # same code holds and restores the same state as td3, which runs here.
    "ddpg": "the td3 class (same code, same state)",
}
# Env steps per iteration: the loop stops between iterations. By default the set's own (env
# steps between two `update` calls), and the run is the set's own: the straight run is its shared
# run, the stop one iteration after its first scheduled checkpoint. Exceptions train with
# `train_every` overridden to this, a scheduled checkpoint every two iterations, a stop after three:
ITERATION = {
    # A checkpoint (2 iterations) must fit a whole episode per env copy: 160 >= 4 envs x 20 + 80.
    "cmaes": 80,
}


def tiny_set(agent: str) -> str:
    return f"{agent}_tiny"


def env_steps_per_iteration(agent: str) -> int:
    if agent in ITERATION:
        return ITERATION[agent]
    hp = registry.get_hparams(tiny_set(agent))()
    return max(1, hp.train_every // hp.num_envs) * hp.num_envs


AGENTS = [agent for agent in repository_agents() if agent not in EXCLUDED]


def test_every_agent_is_covered_or_excluded_for_a_reason():
    assert set(EXCLUDED) <= set(registry.agents.names()), "an exclusion names no agent"
    assert set(SLOW) <= set(AGENTS), "a slow case names no covered agent"
    assert registry.get_agent("ddpg") is registry.get_agent("td3")
    assert "td3" in AGENTS
    for agent in AGENTS:
        assert tiny_set(agent) in registry.hparams, (
            f"agent {agent!r} has no {tiny_set(agent)!r} hparams set: add one (the smoke and "
            "resume tests run every agent through it)"
        )
        assert registry.get_hparams(tiny_set(agent))().agent == agent


def final_checkpoint(run_dir):
    checkpoints = run_dir / "run_0" / "checkpoints"
    pointer = json.loads((checkpoints / "latest.json").read_text())
    directory = checkpoints / pointer["directory"]
    reader = tf.train.load_checkpoint(str(directory / "tf"))
    # Every saved value; the object graph is left out: it holds Keras' layer names ("dense_4"),
    # numbered per process, and the two runs are built in different processes.
    variables = {
        k: reader.get_tensor(k)
        for k in reader.get_variable_to_shape_map()
        if k != "_CHECKPOINTABLE_OBJECT_GRAPH"
    }
    arrays = read_numpy_state(str(directory))
    return pointer["step"], variables, arrays


# Run with -m slow only (default-suite time): agents whose checkpointed state is a family's
# that a faster case here already covers. A new agent runs in the default suite.
SLOW = {
    "c51": "the DQN family's replay and counters (drqn here; dqn in tests/test_resume.py)",
    "qrdqn": "the DQN family's replay and counters (drqn here; dqn in tests/test_resume.py)",
    "a2c": "on-policy rollouts like ppo's",
    "reinforce": "on-policy rollouts like ppo's",
    "ppo_recurrent": "on-policy rollouts like ppo's; recurrent state in the checkpoint like drqn's",
    "sac": "the off-policy actor-critic replay and optimizers of td3",
}


@pytest.mark.parametrize(
    "hparams_set",
    [
        *(
            pytest.param(tiny_set(a), marks=pytest.mark.slow) if a in SLOW else tiny_set(a)
            for a in AGENTS
        ),
        # -m slow: a Dict observation (with an action mask) reaches replay, n-step data and
        # checkpoints packed into one float32 vector (docs/observations.md), the state of a
        # Box-observation DQN; this is the same check on a Dict env end to end.
        pytest.param("dqn_legal_moves_tiny", marks=pytest.mark.slow),
        # Hindsight replay (a Dict-observation DQN too): whole episodes, their bookkeeping and
        # the relabelling generator reach the checkpoint, so the resumed run draws the same goals.
        "her_tiny",
    ],
)
def test_stop_and_continue_equals_straight_run(tmp_path, trained_run, capsys, hparams_set):
    agent, split = registry.get_hparams(hparams_set)().agent, tmp_path / "split"
    if agent in ITERATION:
        # Its own schedule: the straight run trains in the shared trainer process
        # (tests/tiny_trainer.py) while this process trains the split one.
        iteration = env_steps_per_iteration(agent)
        every, stop, total = 2 * iteration, 3 * iteration, 8 * iteration
        override = f"checkpoint_every={every},eval.every_steps={every},train_every={iteration}"
        base = ["--hparams", hparams_set, "--hparam_override", override]
        straight = tmp_path / "straight"
        straight_run = trained_run.start([*base, "--output_dir", straight, "--train_steps", total])
        stop_args, total_args = ["--train_steps", str(stop)], ["--train_steps", str(total)]
    else:
        # The set's own schedule: the straight run is the set's shared run (the one
        # tests/test_train_smoke.py checks), and the stop is one iteration after its first
        # scheduled checkpoint.
        hp = registry.get_hparams(hparams_set)()
        stop, total = hp.checkpoint_every + env_steps_per_iteration(agent), hp.train_steps
        assert stop % hp.checkpoint_every and stop < total, (stop, hp.checkpoint_every, total)
        base, stop_args, total_args = ["--hparams", hparams_set], ["--train_steps", str(stop)], []
        straight, _, proc = trained_run(hparams_set)
        straight_run = None
    # The split run: to `stop`, then the same command with more steps resumes.
    assert train.main([*base, "--output_dir", str(split), *stop_args]) == 0
    capsys.readouterr()
    assert train.main([*base, "--output_dir", str(split), *total_args]) == 0
    assert f"resuming from checkpoint at {stop}" in capsys.readouterr().out
    if straight_run is not None:
        proc = straight_run.result()
    assert proc.returncode == 0, proc.stderr[-2000:]
    step_a, vars_a, arrays_a = final_checkpoint(straight)
    step_b, vars_b, arrays_b = final_checkpoint(split)
    assert step_a == step_b == total
    assert vars_a.keys() == vars_b.keys() and arrays_a.keys() == arrays_b.keys()
    for key in vars_a:
        np.testing.assert_array_equal(vars_a[key], vars_b[key], err_msg=key)
    for key in arrays_a:
        np.testing.assert_array_equal(arrays_a[key], arrays_b[key], err_msg=key)
