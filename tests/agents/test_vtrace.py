"""V-trace (Espeholt et al. 2018, https://arxiv.org/abs/1802.01561, eqs. 1-2, section 4.2)
checked by hand, against the on-policy estimators, and against the paper's sum definition in
numpy."""

import numpy as np
import pytest
import tensorflow as tf

from rl.agents.advantage_estimators import discounted_returns, gae, vtrace
from rl.registry import get_advantage_estimator
from rl.rollout.returns import episode_discounts, fold_truncation

# One env (N = 1), T = 3, gamma = 0.9 everywhere (no episode end), behaviour ratios 2, 0.5, 1.
REWARDS = [[1.0], [2.0], [3.0]]
VALUES = [[0.5], [1.0], [1.5]]
BOOTSTRAP = [2.0]
DISCOUNTS = [[0.9], [0.9], [0.9]]
LOG_RHOS = np.log([[2.0], [0.5], [1.0]])


def _run(**kwargs):
    inputs = {
        "rewards": REWARDS,
        "values": VALUES,
        "discounts": DISCOUNTS,
        "bootstrap_value": BOOTSTRAP,
        "log_rhos": LOG_RHOS,
    }
    options = {k: v for k, v in kwargs.items() if k not in inputs}
    inputs.update({k: v for k, v in kwargs.items() if k in inputs})
    tensors = {k: tf.constant(v, tf.float32) for k, v in inputs.items()}
    advantages, vs = vtrace(**tensors, **options)
    return advantages.numpy()[:, 0], vs.numpy()[:, 0]


def test_vtrace_by_hand_rho_bar_c_bar_1():
    # rho_bar = c_bar = 1: rho = min(1, [2, 0.5, 1]) = [1, 0.5, 1], c = the same.
    # V(x_{t+1}) = [1.0, 1.5, 2.0] (the last is the bootstrap value).
    # delta_0 = 1   * (1 + 0.9 * 1.0 - 0.5) = 1.4
    # delta_1 = 0.5 * (2 + 0.9 * 1.5 - 1.0) = 0.5 * 2.35 = 1.175
    # delta_2 = 1   * (3 + 0.9 * 2.0 - 1.5) = 3.3
    # v_s - V(x_s) = delta_s + 0.9 c_s (v_{s+1} - V(x_{s+1})):
    #   s=2: 3.3;  s=1: 1.175 + 0.9 * 0.5 * 3.3 = 2.66;  s=0: 1.4 + 0.9 * 1 * 2.66 = 3.794
    # v = [0.5 + 3.794, 1.0 + 2.66, 1.5 + 3.3] = [4.294, 3.66, 4.8]
    # A_s = rho_s (r_s + 0.9 v_{s+1} - V(x_s)), v_3 = bootstrap 2.0:
    #   A_0 = 1   * (1 + 0.9 * 3.66 - 0.5) = 3.794
    #   A_1 = 0.5 * (2 + 0.9 * 4.8  - 1.0) = 0.5 * 5.32 = 2.66
    #   A_2 = 1   * (3 + 0.9 * 2.0  - 1.5) = 3.3
    advantages, vs = _run(rho_bar=1.0, c_bar=1.0)
    np.testing.assert_allclose(vs, [4.294, 3.66, 4.8], rtol=1e-6)
    np.testing.assert_allclose(advantages, [3.794, 2.66, 3.3], rtol=1e-6)


def test_vtrace_by_hand_separate_thresholds():
    # rho_bar = 1.5, c_bar = 0.8: rho = [1.5, 0.5, 1.0], c = [0.8, 0.5, 0.8].
    # delta = [1.5 * 1.4, 0.5 * 2.35, 1.0 * 3.3] = [2.1, 1.175, 3.3]
    # v - V: s=2: 3.3; s=1: 1.175 + 0.9 * 0.5 * 3.3 = 2.66; s=0: 2.1 + 0.9 * 0.8 * 2.66 = 4.0152
    # v = [4.5152, 3.66, 4.8]
    # A_0 = 1.5 * (1 + 0.9 * 3.66 - 0.5) = 1.5 * 3.794 = 5.691; A_1 = 2.66; A_2 = 3.3
    advantages, vs = _run(rho_bar=1.5, c_bar=0.8)
    np.testing.assert_allclose(vs, [4.5152, 3.66, 4.8], rtol=1e-6)
    np.testing.assert_allclose(advantages, [5.691, 2.66, 3.3], rtol=1e-6)
    # A separate policy-gradient threshold only changes A: rho^pg = min(1, rho) -> A_0 = 3.794.
    pg_advantages, pg_vs = _run(rho_bar=1.5, c_bar=0.8, pg_rho_bar=1.0)
    np.testing.assert_allclose(pg_vs, vs, rtol=1e-6)
    np.testing.assert_allclose(pg_advantages, [3.794, 2.66, 3.3], rtol=1e-6)
    # lambda scales the traces: c = 0.5 * [0.8, 0.5, 0.8] = [0.4, 0.25, 0.4]
    # v - V: s=1: 1.175 + 0.9 * 0.25 * 3.3 = 1.9175; s=0: 2.1 + 0.9 * 0.4 * 1.9175 = 2.7903
    _, lambda_vs = _run(rho_bar=1.5, c_bar=0.8, lambda_=0.5)
    np.testing.assert_allclose(lambda_vs, [3.2903, 2.9175, 4.8], rtol=1e-6)


def test_vtrace_termination_and_truncation_by_hand():
    # rho = 1 everywhere. The episode terminates at t = 1 (discount 0): no bootstrap there.
    # v_2 = 3 + 0.9 * 2.0 = 4.8 (a new episode, bootstrapped from V(x_3) = 2.0)
    # v_1 = r_1 = 2.0;  v_0 = 1 + 0.9 * v_1 = 2.8
    terminated = tf.constant([[False], [True], [False]])
    truncated = tf.constant([[False], [False], [False]])
    discounts = episode_discounts(terminated, truncated, 0.9)
    advantages, vs = _run(log_rhos=[[0.0], [0.0], [0.0]], discounts=discounts)
    np.testing.assert_allclose(vs, [2.8, 2.0, 4.8], rtol=1e-6)
    # A_s = r_s + discount_s v_{s+1} - V(x_s) = [2.8 - 0.5, 2.0 - 1.0, 4.8 - 1.5]
    np.testing.assert_allclose(advantages, [2.3, 1.0, 3.3], rtol=1e-6)

    # Truncated at t = 1 with V(final_obs_1) = 10: the reward folds to 2 + 0.9 * 10 = 11 and
    # the trace stops there: v_1 = 11, v_0 = 1 + 0.9 * 11 = 10.9; v_2 as before.
    truncated = tf.constant([[False], [True], [False]])
    terminated = tf.zeros_like(truncated)
    rewards = fold_truncation(tf.constant(REWARDS), truncated, tf.fill([3, 1], 10.0), 0.9)
    discounts = episode_discounts(terminated, truncated, 0.9)
    advantages, vs = _run(log_rhos=[[0.0], [0.0], [0.0]], rewards=rewards, discounts=discounts)
    np.testing.assert_allclose(vs, [10.9, 11.0, 4.8], rtol=1e-6)
    np.testing.assert_allclose(advantages, [10.4, 10.0, 3.3], rtol=1e-6)


def _random_batch(seed: int, num_steps: int = 9, num_envs: int = 5):
    rng = np.random.default_rng(seed)
    ended = rng.random((num_steps, num_envs)) < 0.2
    return {
        "rewards": rng.normal(size=(num_steps, num_envs)).astype(np.float32),
        "values": rng.normal(size=(num_steps, num_envs)).astype(np.float32),
        "discounts": np.where(ended, 0.0, 0.97).astype(np.float32),
        "bootstrap_value": rng.normal(size=num_envs).astype(np.float32),
        "log_rhos": rng.normal(scale=0.7, size=(num_steps, num_envs)).astype(np.float32),
    }


@pytest.mark.parametrize("seed", [0, 1])
def test_on_policy_vtrace_equals_n_step_returns_and_gae(seed):
    # pi = mu (log rho = 0) and rho_bar, c_bar >= 1: no clipping binds. Then v_s is the
    # bootstrapped n-step return and A_s = v_s - V(x_s), as the on-policy estimators compute.
    batch = _random_batch(seed)
    batch["log_rhos"] = np.zeros_like(batch["log_rhos"])
    args = [tf.constant(batch[k]) for k in ("rewards", "values", "discounts", "bootstrap_value")]
    expected_advantages, expected_returns = discounted_returns(*args)
    gae_advantages, gae_returns = gae(*args, lambda_=1.0)
    for rho_bar in (1.0, 2.0, None):
        advantages, vs = vtrace(*args, tf.constant(batch["log_rhos"]), rho_bar, rho_bar)
        np.testing.assert_allclose(vs, expected_returns, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(advantages, expected_advantages, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(advantages, gae_advantages, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(vs, gae_returns, rtol=1e-5, atol=1e-5)
    # With lambda < 1 the targets are GAE(lambda)'s returns (TD(lambda)).
    _, vs = vtrace(*args, tf.constant(batch["log_rhos"]), lambda_=0.8)
    _, gae_returns = gae(*args, lambda_=0.8)
    np.testing.assert_allclose(vs, gae_returns, rtol=1e-5, atol=1e-5)


def reference_vtrace(rewards, values, discounts, bootstrap_value, log_rhos, rho_bar, c_bar,
                     lambda_):  # fmt: skip
    """The paper's definition (eq. 1) as a plain sum, written independently of the recursion:
    v_s = V(x_s) + sum_{t>=s} (prod_{s<=i<t} discount_i c_i) delta_t, with the products of
    discounts standing for gamma^{t-s} and stopping the sum at an episode end."""
    num_steps, num_envs = rewards.shape
    rhos = np.exp(log_rhos.astype(np.float64))
    clipped = rhos if rho_bar is None else np.minimum(rho_bar, rhos)
    cs = lambda_ * (rhos if c_bar is None else np.minimum(c_bar, rhos))
    next_values = np.concatenate([values[1:], bootstrap_value[None]])
    vs = np.zeros((num_steps, num_envs))
    for n in range(num_envs):
        for s in range(num_steps):
            total, weight = 0.0, 1.0
            for t in range(s, num_steps):
                delta = clipped[t, n] * (
                    rewards[t, n] + discounts[t, n] * next_values[t, n] - values[t, n]
                )
                total += weight * delta
                weight *= discounts[t, n] * cs[t, n]
            vs[s, n] = values[s, n] + total
    next_vs = np.concatenate([vs[1:], bootstrap_value[None]])
    advantages = clipped * (rewards + discounts * next_vs - values)
    return advantages, vs


@pytest.mark.parametrize(
    ("seed", "rho_bar", "c_bar", "lambda_"),
    [(0, 1.0, 1.0, 1.0), (1, 1.5, 0.7, 1.0), (2, None, None, 0.9), (3, 0.8, 2.0, 0.95)],
)
def test_vtrace_matches_numpy_sum_definition(seed, rho_bar, c_bar, lambda_):
    batch = _random_batch(seed)
    expected_advantages, expected_vs = reference_vtrace(
        **batch, rho_bar=rho_bar, c_bar=c_bar, lambda_=lambda_
    )
    advantages, vs = vtrace(
        **{k: tf.constant(v) for k, v in batch.items()},
        rho_bar=rho_bar,
        c_bar=c_bar,
        lambda_=lambda_,
    )
    np.testing.assert_allclose(vs, expected_vs, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(advantages, expected_advantages, rtol=1e-4, atol=1e-4)


def test_nothing_crosses_a_termination():
    # Data of the next episode (after the end at t = 3 of env 0) must not reach steps 0..3.
    batch = _random_batch(4, num_steps=8, num_envs=2)
    batch["discounts"][:, 0] = 0.97
    batch["discounts"][3, 0] = 0.0
    tensors = {k: tf.constant(v) for k, v in batch.items()}
    advantages, vs = vtrace(**tensors)
    changed = dict(tensors)
    later = np.arange(8)[:, None] >= 4
    for key in ("rewards", "values", "log_rhos"):
        changed[key] = tf.where(later, tensors[key] + 5.0, tensors[key])
    changed["bootstrap_value"] = tensors["bootstrap_value"] + 5.0
    advantages_2, vs_2 = vtrace(**changed)
    np.testing.assert_allclose(vs_2[:4, 0], vs[:4, 0], rtol=1e-6)
    np.testing.assert_allclose(advantages_2[:4, 0], advantages[:4, 0], rtol=1e-6)
    assert not np.allclose(vs_2[4:, 0], vs[4:, 0])  # the change does reach the later steps


def test_targets_carry_no_gradient_and_estimator_is_registered():
    batch = {k: tf.constant(v) for k, v in _random_batch(5).items()}
    with tf.GradientTape() as tape:
        tape.watch(batch["values"])
        advantages, vs = vtrace(**batch)
        total = tf.reduce_sum(advantages) + tf.reduce_sum(vs)
    assert tape.gradient(total, batch["values"]) is None
    assert get_advantage_estimator("vtrace") is vtrace
