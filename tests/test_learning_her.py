"""Learning tests (`-m slow`) of hindsight replay (docs/goal_conditioned.md): seed 0 of each set,
its whole budget; the last evaluation's success rate (the share of its 20 or 50 greedy episodes
that end at the goal, `info["is_success"]`) must be at least 0.9. The rewards are sparse (-1
until the goal) and random exploration rarely reaches the goal, so these sets depend on the
relabelled goals to learn within their budgets.
"""

import csv

import pytest
from test_learning import train_and_read_state

SUCCESS = 0.9


@pytest.mark.slow
@pytest.mark.parametrize(
    "hparams_set", ["sac_her_fetchreach", "td3_her_fetchreach", "dqn_her_bit_flipping"]
)
def test_seed0_ends_with_a_success_rate_of_at_least_0_9(tmp_path, hparams_set):
    if "fetch" in hparams_set:
        pytest.importorskip("gymnasium_robotics")
    train_and_read_state(tmp_path, hparams_set, 0)
    with (tmp_path / "run_0" / "progress.csv").open() as f:
        rates = [float(row["eval_success_rate"]) for row in csv.DictReader(f)]
    assert rates[-1] >= SUCCESS, rates
