"""C51: the categorical projection and loss checked by hand, and the agent's loss, double-Q
selection and replay priorities checked against an independent numpy implementation."""

import numpy as np
import pytest
import tensorflow as tf

import rl
from rl import registry
from rl.agents.gradient_functions import (
    categorical_loss,
    categorical_projection,
    categorical_q_values,
    categorical_support,
    categorical_target,
)
from rl.envs import make_vector_env
from rl.models import QNetwork
from rl.rollout.driver import Driver

SUPPORT = categorical_support(-2.0, 2.0, 5)  # atoms -2, -1, 0, 1, 2; dz = 1


def project(reward, discount, next_probs):
    return categorical_projection(
        tf.constant(reward, tf.float32),
        tf.constant(discount, tf.float32),
        tf.constant(next_probs, tf.float32),
        SUPPORT,
    ).numpy()


def test_support_is_evenly_spaced():
    np.testing.assert_allclose(SUPPORT.numpy(), [-2, -1, 0, 1, 2])
    np.testing.assert_allclose(categorical_support(0.0, 100.0, 51).numpy()[:3], [0, 2, 4])


def test_projection_splits_mass_between_neighbouring_atoms_by_hand():
    # r = 0.5, discount = 0.5: Tz = 0.5 + 0.5 z = [-0.5, 0, 0.5, 1, 1.5].
    # p = [0.1, 0.2, 0.3, 0.4, 0.0]:
    #   -0.5 (0.1) -> halfway between -1 and 0: 0.05 each;
    #    0   (0.2) -> exactly on atom 0: 0.2;
    #    0.5 (0.3) -> 0.15 to 0, 0.15 to 1;
    #    1   (0.4) -> atom 1: 0.4;  1.5 (0.0) -> nothing.
    # m = [0, 0.05, 0.05 + 0.2 + 0.15, 0.15 + 0.4, 0] = [0, 0.05, 0.4, 0.55, 0].
    m = project([0.5], [0.5], [[0.1, 0.2, 0.3, 0.4, 0.0]])
    np.testing.assert_allclose(m, [[0.0, 0.05, 0.4, 0.55, 0.0]], atol=1e-6)
    # A split that is not halfway: r = 0.25, discount = 1, p on atom 0 only: Tz = 0.25 ->
    # 0.75 to atom 0 (closer), 0.25 to atom 1.
    m = project([0.25], [1.0], [[0, 0, 1.0, 0, 0]])
    np.testing.assert_allclose(m, [[0, 0, 0.75, 0.25, 0]], atol=1e-6)


def test_projection_clips_at_v_min_and_v_max_by_hand():
    # r = 1.5, discount = 1: Tz = [-0.5, 0.5, 1.5, 3.5 -> 2, 4.5 -> 2], p = 0.2 each:
    #   -0.5 -> 0.1 to -1, 0.1 to 0;  0.5 -> 0.1 to 0, 0.1 to 1;  1.5 -> 0.1 to 1, 0.1 to 2;
    #   the two clipped atoms -> 0.2 + 0.2 to atom 2.
    # m = [0, 0.1, 0.2, 0.2, 0.5].
    m = project([1.5], [1.0], [[0.2] * 5])
    np.testing.assert_allclose(m, [[0.0, 0.1, 0.2, 0.2, 0.5]], atol=1e-6)
    # r = -3, discount = 0.5: Tz = -3 + 0.5 z in [-4, -2]: everything clips to v_min = -2.
    m = project([-3.0], [0.5], [[0.1, 0.2, 0.3, 0.2, 0.2]])
    np.testing.assert_allclose(m, [[1.0, 0, 0, 0, 0]], atol=1e-6)


def test_terminal_transitions_collapse_to_the_reward():
    # discount 0 (terminated): Tz = r for every atom, whatever p is. r = -1.25 -> 0.25 to -2,
    # 0.75 to -1; r = 1 -> all on atom 1; r = 7 -> clipped to v_max = 2.
    p = [[0.5, 0.1, 0.1, 0.1, 0.2]] * 3
    m = project([-1.25, 1.0, 7.0], [0.0, 0.0, 0.0], p)
    np.testing.assert_allclose(
        m, [[0.25, 0.75, 0, 0, 0], [0, 0, 0, 1.0, 0], [0, 0, 0, 0, 1.0]], atol=1e-6
    )


def numpy_projection(reward, discount, next_probs, support):
    """Algorithm 1 of Bellemare et al. 2017 with floor/ceil, written independently."""
    v_min, v_max, n = support[0], support[-1], len(support)
    dz = (v_max - v_min) / (n - 1)
    m = np.zeros_like(next_probs, dtype=np.float64)
    for b in range(len(reward)):
        for j in range(n):
            tz = np.clip(reward[b] + discount[b] * support[j], v_min, v_max)
            pos = (tz - v_min) / dz
            lower, upper = int(np.floor(pos)), int(np.ceil(pos))
            if lower == upper:
                m[b, lower] += next_probs[b, j]
            else:
                m[b, lower] += next_probs[b, j] * (upper - pos)
                m[b, upper] += next_probs[b, j] * (pos - lower)
    return m


def test_projection_equals_the_papers_floor_ceil_algorithm():
    rng = np.random.default_rng(0)
    support = np.linspace(-10.0, 10.0, 51)
    reward = rng.uniform(-12, 12, size=32).astype(np.float32)
    discount = np.where(rng.random(32) < 0.2, 0.0, 0.97).astype(np.float32)
    next_probs = rng.dirichlet(np.ones(51), size=32).astype(np.float32)
    m = categorical_projection(
        tf.constant(reward),
        tf.constant(discount),
        tf.constant(next_probs),
        tf.constant(support, tf.float32),
    ).numpy()
    np.testing.assert_allclose(
        m, numpy_projection(reward, discount, next_probs, support), atol=1e-5
    )
    np.testing.assert_allclose(m.sum(-1), 1.0, atol=1e-5)


def test_categorical_q_values_by_hand():
    # logits [0, 0, ln 2] -> probs [1/4, 1/4, 1/2] on [-1, 0, 1]: Q = -1/4 + 1/2 = 0.25.
    logits = tf.constant([[[0.0, 0.0, np.log(2.0)], [0.0, 0.0, 0.0]]])
    q = categorical_q_values(logits, categorical_support(-1.0, 1.0, 3))
    np.testing.assert_allclose(q.numpy(), [[0.25, 0.0]], atol=1e-6)


def test_target_uses_the_policy_q_to_pick_the_next_action_by_hand():
    support = categorical_support(-1.0, 1.0, 3)
    # Target net: action 0 puts all mass on atom 1 (value 1), action 1 on atom -1.
    big = 50.0
    next_logits_target = tf.constant([[[0.0, 0.0, big], [big, 0.0, 0.0]]])
    reward, discount = tf.constant([0.0]), tf.constant([0.5])
    # The policy's Q prefers action 1 (double Q: the online net disagrees with the target):
    # Tz = 0.5 * -1 = -0.5 -> half on -1, half on 0.
    chosen_1 = categorical_target(
        reward, discount, next_logits_target, tf.constant([[0.0, 1.0]]), support
    )
    np.testing.assert_allclose(chosen_1.numpy(), [[0.5, 0.5, 0.0]], atol=1e-6)
    # Preferring action 0: Tz = 0.5 -> half on 0, half on 1.
    chosen_0 = categorical_target(
        reward, discount, next_logits_target, tf.constant([[1.0, 0.0]]), support
    )
    np.testing.assert_allclose(chosen_0.numpy(), [[0.0, 0.5, 0.5]], atol=1e-6)


def test_cross_entropy_loss_with_importance_weights_by_hand():
    # Taken action's logits [0, 0, ln 2] -> probs [1/4, 1/4, 1/2]; target m = [0, 1/2, 1/2]:
    # CE = -(1/2 ln 1/4 + 1/2 ln 1/2) = 1.5 ln 2. Row 2: logits all 0 -> probs 1/3; target
    # [1, 0, 0]: CE = ln 3. IS weights [0.5, 1]: loss = (0.5 * 1.5 ln 2 + ln 3) / 2.
    logits = tf.constant(
        [[[9.0, 9.0, 9.0], [0.0, 0.0, np.log(2.0)]], [[0.0, 0.0, 0.0], [5.0, 0.0, 1.0]]]
    )
    action = tf.constant([1, 0], tf.int64)
    target = tf.constant([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    loss, per_sample = categorical_loss(logits, action, target, tf.constant([0.5, 1.0]))
    np.testing.assert_allclose(per_sample.numpy(), [1.5 * np.log(2), np.log(3)], rtol=1e-5)
    assert loss.numpy() == pytest.approx((0.5 * 1.5 * np.log(2) + np.log(3)) / 2, rel=1e-5)
    # Gradients reach the logits but not the target.
    target_var = tf.Variable(target)
    logits_var = tf.Variable(logits)
    with tf.GradientTape() as tape:
        loss, _ = categorical_loss(logits_var, action, target_var)
    grad_logits, grad_target = tape.gradient(loss, [logits_var, target_var])
    assert grad_target is None
    # d CE / d logits of the taken action = (softmax - m) / B: row 1 = ([1/4, 1/4, 1/2] -
    # [0, 1/2, 1/2]) / 2; the action not taken gets nothing.
    np.testing.assert_allclose(grad_logits.numpy()[0, 1], [0.125, -0.125, 0.0], atol=1e-6)
    np.testing.assert_allclose(grad_logits.numpy()[0, 0], [0.0, 0.0, 0.0])


def test_distributional_heads_output_logits_per_atom():
    obs = tf.random.stateless_normal([3, 4], seed=[1, 2])
    plain = QNetwork(2, "mlp", [8], "relu", dueling=False, num_atoms=7)
    assert plain(obs).shape == (3, 2, 7)
    dueling = QNetwork(2, "mlp", [8], "relu", dueling=True, noisy=True, num_atoms=7)
    logits = dueling(obs)
    assert logits.shape == (3, 2, 7)
    # Per atom, the mean over actions of V + A - mean_a A is the value stream's output.
    value = dueling.head.value(dueling.torso(obs))
    np.testing.assert_allclose(tf.reduce_mean(logits, 1).numpy(), value.numpy(), atol=1e-5)


# ------------------------------------------------------------------------------ the agent
def make_agent(hparams_set="c51_tiny", overrides=""):
    hp = registry.get_hparams(hparams_set)()
    hp.jit_compile = False  # seconds of XLA compile per test; training tests run XLA
    hp.override(overrides)
    hp.freeze()
    env, spec = make_vector_env("CartPole-v1", 1, seed=0)
    return registry.get_agent(hp.agent)(spec, hp, seed=0), env, spec


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_agent_loss_and_priorities_match_numpy_double_q_c51():
    agent, env, spec = make_agent("c51_tiny", "gradient_steps=1,learning_starts=0,lr=0.01")
    hp = agent.hparams
    assert hp.memory == "prioritized" and hp.double_q and hp.n_step == 3
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(120)
    for _ in range(3):  # gradient steps 0..2: the online net moves away from the target
        agent.update()
    assert int(agent.learner.gradient_steps.numpy()) % hp.target_update_period != 0  # no sync next
    batch = agent.replay.sample(hp.batch_size, num_batches=1, beta=0.4)
    indices = batch["indices"]
    s = {k: v[0] for k, v in batch.items() if k != "indices"}
    support = agent.support.numpy()
    online_next = agent.q_network(s["next_obs"]).numpy()
    target_next = agent.target_network(s["next_obs"]).numpy()
    logits = agent.q_network(s["obs"]).numpy()
    # Double Q: the online net's MEAN Q picks a*, the target net's distribution is projected.
    a_star = np.argmax((softmax(online_next) * support).sum(-1), -1)
    next_probs = softmax(target_next)[np.arange(len(a_star)), a_star]
    m = numpy_projection(s["reward"], s["discount"], next_probs, support)
    log_p = np.log(softmax(logits)[np.arange(len(a_star)), s["action"]])
    per_sample = -(m * log_p).sum(-1)

    agent.replay.sample = lambda *args, **kwargs: batch  # the next update trains on `batch`
    out = agent.sample_and_train()
    np.testing.assert_allclose(out["td_error"].numpy()[0], per_sample, rtol=1e-4)
    assert float(out["loss"]) == pytest.approx(float(np.mean(s["weights"] * per_sample)), rel=1e-4)
    # Rainbow's priority: the per-sample loss, stored as (loss + epsilon)^alpha.
    stored = agent.replay.get_priorities(indices[0])
    expected = (per_sample + hp.per_epsilon.value(0)) ** hp.per_alpha.value(0)
    np.testing.assert_allclose(stored, expected, rtol=1e-4)


def test_rainbow_updates_reduce_the_loss_on_a_fixed_batch():
    # Noisy + dueling + distributional: gradients reach every part (fresh noise each step).
    agent, env, spec = make_agent(
        "rainbow_tiny", "memory=uniform,gradient_steps=8,learning_starts=0,lr=0.01"
    )
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(100)
    batch = agent.replay.sample(16, num_batches=1)
    batch.pop("indices")
    repeated = {k: tf.repeat(v, 8, axis=0) for k, v in batch.items()}
    first = float(agent.train_on_batch(repeated)["loss"])  # mean over gradient steps 0..7
    later = float(agent.train_on_batch(repeated)["loss"])  # steps 8..15 on the same batch
    assert later < first


@pytest.mark.parametrize(
    ("overrides", "message"),
    [("num_atoms=1", "num_atoms must be >= 2"), ("v_min=5.0,v_max=5.0", "v_min < v_max")],
)
def test_bad_support_is_a_user_error(overrides, message):
    with pytest.raises(rl.errors.UserError, match=message):
        make_agent("c51_tiny", overrides)
