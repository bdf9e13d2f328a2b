"""CoinRun learning test (`-m slow`): `ppo_coinrun`, seed 0, 200k env steps (a tenth of the set's
2M), must beat a uniform random policy clearly, on the levels it trains on and on unseen ones.

Reference (measured by hand, 2026-11-26, no record kept): a uniform random policy scores 3.2 on
the 200 training levels and 2.9 on unlimited levels (100 episodes each, sd ~4.6: the return is
10 or 0). The set's evaluation plays unlimited (almost all unseen) levels, greedy; the 300k-step
run of the same seed evaluated 5.0, 7.5, 5.5, 6.5 (20 episodes) at 53k, 102k, 152k and 201k
steps, and its training episodes (stochastic policy, training levels) averaged 6.1-6.7 there.
The thresholds, 5.0 for both, are ~3 standard errors above random for 50 evaluation episodes.
This test (2026-11-26, load 3-5): eval 7.0 on unseen levels, training episodes 6.5; 318 s of
training, 331 s test wall.
"""

import csv

import pytest
from test_learning import train_and_read_state

BUDGET = 200_000


@pytest.mark.slow
def test_ppo_coinrun_seed0_beats_random_on_training_and_unseen_levels(tmp_path):
    pytest.importorskip("procgen")
    override = f"train_steps={BUDGET},eval.every_steps={BUDGET},eval.episodes=50"
    state = train_and_read_state(tmp_path, "ppo_coinrun", 0, override, timeout=3600)
    with open(tmp_path / "run_0" / "progress.csv", newline="") as f:
        final = list(csv.DictReader(f))[-1]
    assert int(final["env_steps"]) >= BUDGET and int(final["eval_episodes"]) == 50
    assert state["last_eval_return"] >= 5.0, final  # unseen levels, greedy
    assert float(final["train_return_mean"]) >= 5.0, final  # training levels, as it trains
