"""DQN-family learning tests: NoisyNet DQN, C51, Rainbow and QR-DQN on CartPole-v1 to a greedy
eval of 475 (10 episodes) with seed 0 (`-m slow`).

Measured on the 2-core dev machine (seed 0, the sets as registered, which stop at 475):
noisy_dqn_cartpole 40,192 env steps / 22.5 s of training (progress.csv wall_seconds),
c51_cartpole 15,104 / 11.8 s, rainbow_cartpole 20,224 / 26.0 s (eval 475.7); qrdqn_cartpole
25,088 / 22.3 s (eval 500.0; seeds 1 and 2: 35,072 and 30,208 env steps). Each test runs
train.py as a subprocess (~30-45 s with TF start-up).
"""

import pytest
from test_learning import train_and_read_state


@pytest.mark.slow
@pytest.mark.parametrize(
    "hparams_set", ["noisy_dqn_cartpole", "c51_cartpole", "rainbow_cartpole", "qrdqn_cartpole"]
)
def test_dqn_family_cartpole_seed0_reaches_475(tmp_path, hparams_set):
    state = train_and_read_state(tmp_path, hparams_set, 0, "stop_at_eval_return=475.0")
    assert state["first_step_at_threshold"] is not None, state
    assert state["last_eval_return"] >= 475.0
