"""CMA-ES learning test: CartPole-v1 to a greedy eval of 475 with seed 0 (`-m slow`).

The greedy policy is the CMA-ES mean; evaluation is the trainer's usual 10 greedy episodes.
Measured on the shared 2-core dev machine (seed 0, stop_at_eval_return=475): first evaluation at
475+ after 90,112 env steps (eval mean 500.0), 17.9 s of training wall time (progress.csv), ~30 s
for the whole train.py process. Seeds 1-4 took 130k, 50k, 70k and 125k env steps.
"""

import pytest
from test_learning import train_and_read_state


@pytest.mark.slow
def test_cmaes_cartpole_seed0_reaches_475(tmp_path):
    state = train_and_read_state(tmp_path, "cmaes_cartpole", 0, "stop_at_eval_return=475.0")
    assert state["first_step_at_threshold"] is not None, state
    assert state["last_eval_return"] >= 475.0
