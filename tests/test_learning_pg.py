"""Policy-gradient learning tests: CartPole-v1 to a greedy eval of 475 with seed 0 (`-m slow`).

Measured on the shared 2-core dev machine (2026-11-21, seed 0, stop_at_eval_return=475): env
steps at the first evaluation that reached 475 and train.py wall seconds, in each comment.
"""

import pytest
from test_learning import train_and_read_state


@pytest.mark.slow
@pytest.mark.parametrize(
    "hparams_set",
    [
        "ppo_cartpole",  # 25,600 env steps, 17 s
        "a2c_cartpole",  # 25,000 env steps, 9 s (2026-11-22, SB3-faithful update)
        "reinforce_baseline_cartpole",  # 81,920 env steps, 24 s
        "ppo_cartpole_tuned",  # 10,240 env steps, 17 s (2026-11-27, the Optuna study's winner)
    ],
)
def test_policy_gradient_cartpole_seed0_reaches_475(tmp_path, hparams_set):
    state = train_and_read_state(tmp_path, hparams_set, 0, "stop_at_eval_return=475.0")
    assert state["first_step_at_threshold"] is not None, state
    assert state["last_eval_return"] >= 475.0
