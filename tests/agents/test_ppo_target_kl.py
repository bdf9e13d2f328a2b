"""PPO's `target_kl` early stop (Stable-Baselines3's rule), Python-env agent: the update ends
before the first gradient step whose minibatch's approx KL exceeds 1.5 * target_kl.

Hand-computed cases on ppo_tiny (2 envs x 32 steps = 64 samples). The first check of an update
sees the rollout's own weights, so its KL is ~0 (float noise, < 1e-6) and the first step always
runs; one Adam step at lr 1e-2 moves the policy by far more than 1.5 * 1e-5 in KL, so the check
before the second step stops the update: exactly one gradient step.
"""

import numpy as np
import pytest
from test_policy_gradient import make_agent

import rl  # noqa: F401

STEP_THEN_STOP = "lr=1e-2,target_kl=1e-5"
NO_XLA = "jit_compile=false"


def _one_update(overrides: str, like=None):
    """A ppo_tiny agent after one update; `like`: start from that agent's initial weights (two
    agents built in one process do not draw the same initial weights)."""
    agent, driver = make_agent("ppo_tiny", overrides)
    if like is not None:
        for variable, value in zip(agent.model.trainable_variables, like, strict=True):
            variable.assign(value)
    agent.initial_weights = _weights(agent)
    driver.collect(agent.steps_per_iteration)
    metrics = agent.update()
    return agent, metrics


def _weights(agent) -> list[np.ndarray]:
    return [v.numpy() for v in agent.model.trainable_variables]


def test_kl_past_the_limit_after_the_first_minibatch_stops_after_one_step():
    # batch 32: 2 minibatches x 2 epochs = 4 steps without the stop. XLA-compiled update (the
    # set's default on CPU), as on the compiled path; the other tests skip XLA for time.
    agent, driver = make_agent("ppo_tiny", STEP_THEN_STOP)
    for update in range(1, 3):
        driver.collect(agent.steps_per_iteration)
        metrics = agent.update()
        assert metrics["train/update_steps"] == 1.0
        assert int(agent.learner.gradient_steps.numpy()) == update  # counts the steps taken only
        if update == 1:  # the one step's KL: under the weights that collected
            assert 0.0 <= metrics["train/approx_kl"] < 1e-6
    assert agent.train_on_batch.experimental_get_tracing_count() == 1


def test_the_stopped_update_equals_the_same_steps_without_a_stop():
    # One 64-sample minibatch per epoch, 3 epochs: epoch 1's step runs, epoch 2's check stops.
    # The weights are then those of a 1-epoch update without target_kl (same permutation,
    # same step), and no further step changed them.
    stopped, metrics = _one_update(f"{STEP_THEN_STOP},{NO_XLA},batch_size=64,n_epochs=3")
    assert int(stopped.learner.gradient_steps.numpy()) == 1
    assert metrics["train/update_steps"] == 1.0
    one_epoch, _ = _one_update(
        f"lr=1e-2,{NO_XLA},batch_size=64,n_epochs=1", stopped.initial_weights
    )
    for a, b in zip(_weights(stopped), _weights(one_epoch), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_limit_never_reached_runs_every_step_bit_equal_to_no_limit():
    off, off_metrics = _one_update(f"lr=1e-2,{NO_XLA}")
    loose, loose_metrics = _one_update(f"lr=1e-2,{NO_XLA},target_kl=1e9", off.initial_weights)
    assert int(off.learner.gradient_steps.numpy()) == int(loose.learner.gradient_steps.numpy()) == 4
    assert loose_metrics["train/update_steps"] == 4.0
    assert "train/update_steps" not in off_metrics  # the unchanged fixed-length loop
    for a, b in zip(_weights(off), _weights(loose), strict=True):
        np.testing.assert_array_equal(a, b)
    for key in ("train/loss", "train/approx_kl", "train/clip_fraction"):
        assert off_metrics[key] == pytest.approx(loose_metrics[key], rel=1e-6, abs=1e-9)


# Slow (~9 s of CPU): recurrent PPO reaches the stop through the same epoch loop as PPO, whose
# stop the tests above check in the default tier.
@pytest.mark.slow
def test_recurrent_ppo_stops_too():
    agent, driver = make_agent("ppo_recurrent_tiny", f"{STEP_THEN_STOP},{NO_XLA}")
    driver.collect(agent.steps_per_iteration)
    assert agent.update()["train/update_steps"] == 1.0
    assert int(agent.learner.gradient_steps.numpy()) == 1


def test_target_kl_under_a_strategy_stops_as_on_one_device():
    # The replicated KL check (one all-reduce of the replicas' weighted KLs); 2 replicas against
    # one device: tests/systems/strategy_equivalence.py, case ppo_target_kl_sgd.
    import tensorflow as tf

    with tf.distribute.OneDeviceStrategy("/cpu:0").scope():
        agent, driver = make_agent("ppo_tiny", f"{STEP_THEN_STOP},{NO_XLA}")
    assert agent.stops_early
    driver.collect(agent.steps_per_iteration)
    assert agent.update()["train/update_steps"] == 1.0
    assert int(agent.learner.gradient_steps.numpy()) == 1
