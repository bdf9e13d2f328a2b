"""Learning tests (`-m slow`) of hindsight replay (docs/goal_conditioned.md): seed 0 of each set,
its whole budget, must reach a success rate of 0.9 (the share of 20 or 50 greedy evaluation
episodes that end at the goal, `info["is_success"]`) at some evaluation. Without relabelling,
these sparse-reward tasks stay near 0: the first evaluations, before learning, show it.
"""

import csv

import pytest
from test_learning import train_and_read_state

SUCCESS = 0.9


@pytest.mark.slow
@pytest.mark.parametrize(
    "hparams_set", ["sac_her_fetchreach", "td3_her_fetchreach", "dqn_her_bit_flipping"]
)
def test_seed0_reaches_a_success_rate_of_0_9(tmp_path, hparams_set):
    if "fetch" in hparams_set:
        pytest.importorskip("gymnasium_robotics")
    train_and_read_state(tmp_path, hparams_set, 0)
    with (tmp_path / "run_0" / "progress.csv").open() as f:
        rates = [float(row["eval_success_rate"]) for row in csv.DictReader(f)]
    assert rates[0] < 0.5, rates  # before learning: the goal is rarely reached
    assert max(rates) >= SUCCESS, rates
