"""Acrobot-v1 learning tests (`-m slow`): seed 0, greedy evaluation of 10 episodes every 5000 env
steps must reach a mean return of -100 within the set's budget (dqn_acrobot 100k env steps,
ppo_acrobot and a2c_acrobot 500k); training stops at the first evaluation that does.

Measured on the shared 2-core dev machine (seed 0; the same runs, with SB3 beside them, are
seed 0 of the campaign `classic_control`, docs/benchmarks.md): see each comment.
"""

import pytest
from test_learning import train_and_read_state


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hparams_set", "budget"),
    [
        ("dqn_acrobot", 100_000),  # -85.2 at 30,000 env steps, 147 s (2026-11-22, load 10)
        ("ppo_acrobot", 500_000),  # -82.0 at 20,480 env steps, 7.5 s (2026-11-22, load 6)
        ("a2c_acrobot", 500_000),  # -89.0 at 10,000 env steps, 5 s (2026-11-22, load 5)
    ],
)
def test_acrobot_seed0_reaches_minus_100(tmp_path, hparams_set, budget):
    state = train_and_read_state(
        tmp_path,
        hparams_set,
        0,
        f"stop_at_eval_return=-100.0,eval.every_steps=5000,eval.episodes=10,train_steps={budget}",
    )
    assert state["first_step_at_threshold"] is not None, state
    assert state["first_step_at_threshold"] <= budget
    assert state["last_eval_return"] >= -100.0
