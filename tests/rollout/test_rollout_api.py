"""`Rollout`: Monte-Carlo returns by hand across terminations and truncations; slice, select,
concatenate, flatten, batch-major invariants; shuffling and minibatches."""

import numpy as np
import pytest
import tensorflow as tf

from rl.rollout import (
    Rollout,
    concatenate,
    flatten_steps,
    minibatch_indices,
    minibatches,
    monte_carlo_returns,
    shuffle,
)

F = np.float32


def hand_rollout() -> Rollout:
    """T=4 steps of N=3 envs, obs = 10 t + n (shape [1]), action = t + n.

    env 0: no episode end (runs on past the rollout);
    env 1: terminates at t=1, a new episode runs t=2..3;
    env 2: truncated at t=2 (true final obs 99), a new episode starts at t=3.
    """
    t, n = np.meshgrid(np.arange(4), np.arange(3), indexing="ij")
    terminated = np.zeros([4, 3], bool)
    truncated = np.zeros([4, 3], bool)
    terminated[1, 1] = True
    truncated[2, 2] = True
    final_obs = np.zeros([4, 3, 1], F)
    final_obs[2, 2] = 99.0
    return Rollout(
        obs=(10 * t + n).astype(F)[..., None],
        action=(t + n).astype(np.int64),
        reward=np.array([[1, 1, 1], [2, 1, 1], [3, 1, 1], [4, 1, 1]], F),
        terminated=terminated,
        truncated=truncated,
        final_obs=final_obs,
        last_next_obs=np.array([[40], [41], [42]], F),
        log_prob=-(t + n).astype(F) / 10,
        value=(t * n).astype(F),
    )


def assert_rollouts_equal(a: Rollout, b: Rollout) -> None:
    a, b = a.numpy(), b.numpy()
    for name, value in a.as_batch().items():
        np.testing.assert_array_equal(value, b.as_batch()[name], err_msg=name)
    assert set(a.as_batch()) == set(b.as_batch())


# ------------------------------------------------------------------- Monte-Carlo returns
def test_monte_carlo_returns_by_hand_without_a_critic():
    # gamma 0.5, no bootstrap anywhere (sums of observed rewards):
    # env 0: G3 = 4, G2 = 3 + 2 = 5, G1 = 2 + 2.5 = 4.5, G0 = 1 + 2.25 = 3.25.
    # env 1 (terminated at 1): G1 = 1, G0 = 1 + 0.5 = 1.5; new episode: G3 = 1, G2 = 1.5.
    # env 2 (truncated at 2, no critic: the truncated episode is worth its rewards):
    #   G2 = 1, G1 = 1.5, G0 = 1.75; new episode G3 = 1.
    returns = hand_rollout().monte_carlo_returns(0.5).numpy()
    np.testing.assert_allclose(
        returns, [[3.25, 1.5, 1.75], [4.5, 1.0, 1.5], [5.0, 1.5, 1.0], [4.0, 1.0, 1.0]]
    )


def test_monte_carlo_returns_by_hand_with_bootstraps():
    # final value V(final_obs) = 6 at the truncation (env 2, t=2) and V(s_4) = [8, 2, 4]:
    # env 0: G3 = 4 + 0.5*8 = 8, G2 = 3 + 4 = 7, G1 = 2 + 3.5 = 5.5, G0 = 1 + 2.75 = 3.75.
    # env 1: the termination ignores any value: G1 = 1, G0 = 1.5; G3 = 1 + 0.5*2 = 2, G2 = 2.
    # env 2: G2 = 1 + 0.5*6 = 4, G1 = 1 + 2 = 3, G0 = 1 + 1.5 = 2.5; G3 = 1 + 0.5*4 = 3.
    final_values = np.zeros([4, 3], F)
    final_values[2, 2] = 6.0
    final_values[1, 1] = 100.0  # at a termination: must be ignored
    returns = hand_rollout().monte_carlo_returns(0.5, final_values, np.array([8, 2, 4], F))
    np.testing.assert_allclose(
        returns.numpy(), [[3.75, 1.5, 2.5], [5.5, 1.0, 3.0], [7.0, 2.0, 4.0], [8.0, 2.0, 3.0]]
    )


def test_returns_of_a_slice_bootstrapped_with_the_rest_equal_the_whole():
    rollout = hand_rollout()
    whole = rollout.monte_carlo_returns(0.9).numpy()
    head = rollout.slice(0, 2).monte_carlo_returns(0.9, bootstrap_value=whole[2]).numpy()
    np.testing.assert_allclose(head, whole[:2], rtol=1e-6)
    # The module function is the same computation.
    r = hand_rollout()
    np.testing.assert_array_equal(
        monte_carlo_returns(r.reward, r.terminated, r.truncated, 0.9).numpy(), whole
    )


# ------------------------------------------------------------------ cutting and joining
def test_slice_keeps_the_bootstrap_state_and_concatenate_undoes_it():
    rollout = hand_rollout()
    head, tail = rollout.slice(0, 3), rollout.slice(3, 4)
    assert (head.num_steps, head.num_envs, len(head)) == (3, 3, 9)
    # The state after step 2 of each env is obs[3] (the reset obs in env 2, which a truncation
    # never bootstraps from: it uses final_obs).
    np.testing.assert_array_equal(np.asarray(head.last_next_obs), [[30], [31], [32]])
    np.testing.assert_array_equal(np.asarray(tail.last_next_obs), [[40], [41], [42]])
    assert_rollouts_equal(concatenate([head, tail]), rollout)
    assert_rollouts_equal(rollout.slice(-2, 4), rollout.slice(2, 4))
    with pytest.raises(ValueError, match="empty"):
        rollout.slice(2, 2)


def test_select_envs_and_concatenate_along_envs():
    rollout = hand_rollout()
    swapped = concatenate([rollout.select_envs([2]), rollout.select_envs([0, 1])], axis="envs")
    assert_rollouts_equal(swapped.select_envs([1, 2, 0]), rollout)
    np.testing.assert_array_equal(swapped.numpy().reward[:, 0], [1, 1, 1, 1])  # env 2's


def test_concatenate_refuses_mixed_optional_fields_and_bad_axes():
    rollout = hand_rollout()
    with pytest.raises(ValueError, match="log_prob"):
        concatenate([rollout, rollout.replace(log_prob=None)])
    with pytest.raises(ValueError, match="axis"):
        concatenate([rollout], axis="batch")
    with pytest.raises(KeyError, match="final_obs"):
        Rollout.from_batch({"obs": 0})


def test_flatten_and_batch_major_layouts():
    rollout = hand_rollout()
    flat = {k: v.numpy() for k, v in rollout.flatten().items()}
    assert flat["obs"].shape == (12, 1) and "last_next_obs" not in flat
    # Row t * N + n is step t of env n: row 7 = (t=2, n=1) -> obs 21, action 3.
    assert flat["obs"][7, 0] == 21 and flat["action"][7] == 3
    rows = rollout.batch_major()
    assert rows["obs"].shape == (3, 4, 1) and rows["last_next_obs"].shape == (3, 1)
    np.testing.assert_array_equal(rows["reward"].numpy()[0], [1, 2, 3, 4])  # env 0's segment
    assert_rollouts_equal(Rollout.from_batch_major(rows), rollout)
    np.testing.assert_array_equal(flatten_steps(np.ones([2, 3, 5])).shape, [6, 5])


def test_discounts_are_zero_at_every_episode_end():
    np.testing.assert_allclose(
        hand_rollout().discounts(0.5).numpy(),
        [[0.5, 0.5, 0.5], [0.5, 0.0, 0.5], [0.5, 0.5, 0.0], [0.5, 0.5, 0.5]],
    )


# --------------------------------------------------------------- shuffling, minibatches
def test_shuffle_applies_one_permutation_to_every_field():
    samples = hand_rollout().flatten()
    shuffled = {k: v.numpy() for k, v in shuffle(samples, tf.random.Generator.from_seed(3)).items()}
    # obs = 10 t + n and action = t + n: every row still pairs its own obs and action.
    t, n = shuffled["obs"][:, 0] // 10, shuffled["obs"][:, 0] % 10
    np.testing.assert_array_equal(shuffled["action"], t + n)
    np.testing.assert_array_equal(np.sort(shuffled["obs"][:, 0]), np.sort(samples["obs"][:, 0]))
    assert not np.array_equal(shuffled["obs"], samples["obs"].numpy())


def test_minibatches_cover_every_sample_once_and_follow_the_generator():
    samples = hand_rollout().flatten()
    batches = minibatches(samples, tf.random.Generator.from_seed(5), 3)
    assert [int(b["obs"].shape[0]) for b in batches] == [4, 4, 4]
    seen = np.concatenate([b["obs"].numpy()[:, 0] for b in batches])
    np.testing.assert_array_equal(np.sort(seen), np.sort(samples["obs"].numpy()[:, 0]))
    # The same generator state gives the same split as minibatch_indices.
    indices = minibatch_indices(tf.random.Generator.from_seed(5), 12, 3).numpy()
    np.testing.assert_array_equal(
        batches[1]["obs"].numpy()[:, 0], samples["obs"].numpy()[indices[1], 0]
    )
    with pytest.raises(ValueError, match="first dimension"):
        shuffle({"a": tf.zeros([2]), "b": tf.zeros([3])}, tf.random.Generator.from_seed(0))


def test_rollout_methods_trace_inside_tf_function():
    rollout = hand_rollout()

    @tf.function
    def returns_of(batch):
        # as_batch inside the graph too (it once deep-copied, which graph tensors refuse).
        batch = Rollout.from_batch(batch).as_batch()
        return Rollout.from_batch(batch).slice(1, 4).monte_carlo_returns(0.5)

    eager = rollout.slice(1, 4).monte_carlo_returns(0.5).numpy()
    np.testing.assert_allclose(returns_of(rollout.as_batch()).numpy(), eager)
