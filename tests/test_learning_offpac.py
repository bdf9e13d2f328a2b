"""Off-PAC learning test: CartPole-v1 to a greedy eval of 475 with seed 0 (`-m slow`).

Measured on the shared 2-core dev machine (seed 0, offpac_cartpole, stop_at_eval_return=475):
the first evaluation (10 greedy episodes) at or above 475 came at 56,320 env steps (mean 500.0),
~40-75 s of train.py wall time depending on the load; seeds 1 and 2 got there at 15,360 (500.0)
and 43,520 (485.0) env steps.
"""

import pytest
from test_learning import train_and_read_state


@pytest.mark.slow
def test_offpac_cartpole_seed0_reaches_475(tmp_path):
    state = train_and_read_state(tmp_path, "offpac_cartpole", 0, "stop_at_eval_return=475.0")
    assert state["first_step_at_threshold"] is not None, state
    assert state["last_eval_return"] >= 475.0
