"""Learning test (`-m slow`): `dqn_mountaincar` solves MountainCar-v0 with a fixed seed.

MountainCar-v0 counts as solved at a mean return of -110. The greedy evaluation (10 episodes,
every 2.5k env steps) runs on envs WITHOUT the energy shaping the agent trains with, so the
threshold is met in the env's own reward. Measured on the 2-core dev machine (2026-11-21,
other jobs running): seed 0 stopped at 40,000 env steps with -104.6 after ~290 s of training.
"""

import csv

import pytest
from test_learning import train_and_read_state


@pytest.mark.slow
def test_dqn_mountaincar_seed0_reaches_minus_110(tmp_path):
    state = train_and_read_state(tmp_path, "dqn_mountaincar", 0)
    assert state["first_step_at_threshold"] is not None, state
    assert state["last_eval_return"] >= -110.0
    with open(tmp_path / "run_0" / "progress.csv", newline="") as f:
        last = list(csv.DictReader(f))[-1]
    # The true MountainCar return of an episode is minus its length (-1 per step): a shaped
    # return would not be.
    assert float(last["eval_return_mean"]) == -float(last["eval_length_mean"])
    assert int(last["eval_episodes"]) == 10
