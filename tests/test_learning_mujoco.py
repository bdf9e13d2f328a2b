"""MuJoCo learning tests (`-m slow`), one per set family: seed 0 of the set, its own protocol
(10 deterministic episodes every 10k env steps), must reach THRESHOLD within 100k env steps.

The thresholds are not measured yet: each is None, and its test skips, until it is set from a
measured learning curve of ours at this budget (seeds 0-2), never below what Stable-Baselines3
reaches at the same budget on this machine (benchmarks/algorithm_table.py's MuJoCo rows).
Write the measured numbers and the command here when setting one.
"""

import pytest
from test_learning import train_and_read_state

BUDGET = 100_000
# Mean evaluation return each set must reach by BUDGET env steps (None: not measured yet).
SAC_HALFCHEETAH_THRESHOLD: float | None = None
TD3_HALFCHEETAH_THRESHOLD: float | None = None
PPO_HOPPER_THRESHOLD: float | None = None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hparams_set", "threshold"),
    [
        ("sac_halfcheetah", SAC_HALFCHEETAH_THRESHOLD),
        ("td3_halfcheetah", TD3_HALFCHEETAH_THRESHOLD),
        ("ppo_hopper", PPO_HOPPER_THRESHOLD),
    ],
)
def test_mujoco_seed0_reaches_its_threshold_within_100k_steps(tmp_path, hparams_set, threshold):
    if threshold is None:
        pytest.skip(f"{hparams_set}: threshold not measured yet (see the module docstring)")
    override = f"train_steps={BUDGET},stop_at_eval_return={threshold}"
    state = train_and_read_state(tmp_path, hparams_set, 0, override, timeout=3600)
    assert state["first_step_at_threshold"] is not None, state
    assert state["first_step_at_threshold"] <= BUDGET
    assert state["last_eval_return"] >= threshold
