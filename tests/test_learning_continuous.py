"""Continuous-control learning tests (`-m slow`): Pendulum-v1, seed 0, greedy eval of 10
episodes every 2000 env steps must reach a mean return of -200.

Budgets: 20k env steps for SAC and TD3, 30k for DDPG (the sets' `train_steps`). Measured on the
2-core dev machine (2026-11-21, shared, so seconds are noisy): SAC at 4,032 env steps (46 s),
TD3 at 6,016 (69 s), DDPG at 4,032 (28 s). Stable-Baselines3 on this machine: SAC 4k, TD3 14k.
"""

import pytest
from test_learning import train_and_read_state


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hparams_set", "budget"),
    [("sac_pendulum", 20_000), ("td3_pendulum", 20_000), ("ddpg_pendulum", 30_000)],
)
def test_pendulum_seed0_reaches_minus_200(tmp_path, hparams_set, budget):
    state = train_and_read_state(tmp_path, hparams_set, 0, "stop_at_eval_return=-200.0")
    assert state["first_step_at_threshold"] is not None, state
    assert state["first_step_at_threshold"] <= budget
    assert state["last_eval_return"] >= -200.0
