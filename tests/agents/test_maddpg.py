"""MADDPG: its losses checked by hand, and the agent's acting, learning and checkpoint contents
on the real mpe2 envs (rl/envs/multi_agent.py)."""

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.agents.gradient_functions import (
    maddpg_actor_loss,
    maddpg_critic_loss,
    maddpg_critic_target,
    maddpg_joint_actions,
)
from rl.envs import make_vector_env
from rl.errors import UserError
from rl.rollout.driver import Driver

SPREAD = "mpe/simple_spread_v3"
SPEAKER_LISTENER = "mpe/simple_speaker_listener_v4"


# ------------------------------------------------------------------------------ losses
def test_critic_target_masks_terminated_transitions_by_hand():
    # Two agents, two transitions; the second terminated (discount 0), the first did not
    # (discount = gamma = 0.95). Team rewards [1, 2] are shared by both critics:
    #   agent 0: [1 + 0.95 * 10, 2 + 0 * 20] = [10.5, 2];  agent 1: [1 + 0.95 * 4, 2] = [4.8, 2].
    reward, discount = tf.constant([1.0, 2.0]), tf.constant([0.95, 0.0])
    next_q = tf.constant([[10.0, 20.0], [4.0, 8.0]])
    target = maddpg_critic_target(reward, discount, next_q)
    np.testing.assert_allclose(target.numpy(), [[10.5, 2.0], [4.8, 2.0]], rtol=1e-6)
    # Per-agent rewards [N, B]: agent 1 gets -1 in the first transition: -1 + 0.95 * 4 = 2.8.
    per_agent = tf.constant([[1.0, 2.0], [-1.0, 2.0]])
    target = maddpg_critic_target(per_agent, discount, next_q)
    np.testing.assert_allclose(target.numpy(), [[10.5, 2.0], [2.8, 2.0]], rtol=1e-6)


def test_critic_loss_and_its_gradient_by_hand():
    # td = y - Q = [[2 - 1, 2 - 2], [1 - 3, 5 - 5]] = [[1, 0], [-2, 0]]; IS weights [1, 0.5].
    # 0.5 * td^2 * w = [[0.5, 0], [2, 0]]; mean over the batch [0.25, 1.0]; sum 1.25.
    q_values = tf.Variable([[1.0, 2.0], [3.0, 5.0]])
    target = tf.constant([[2.0, 2.0], [1.0, 5.0]])
    weights = tf.constant([1.0, 0.5])
    with tf.GradientTape() as tape:
        loss, td_error = maddpg_critic_loss(q_values, target, weights)
    assert float(loss) == pytest.approx(1.25)
    np.testing.assert_allclose(td_error.numpy(), [[1.0, 0.0], [-2.0, 0.0]])
    # d loss / d Q_ib = -td_ib * w_b / B: [[-1 * 1 / 2, 0], [2 * 1 / 2, 0]] = [[-0.5, 0], [1, 0]].
    np.testing.assert_allclose(tape.gradient(loss, q_values).numpy(), [[-0.5, 0.0], [1.0, 0.0]])
    # The target is held fixed: no gradient reaches it.
    target_var = tf.Variable(target)
    with tf.GradientTape() as tape:
        loss, _ = maddpg_critic_loss(q_values, target_var)
    assert tape.gradient(loss, target_var) is None


def test_joint_actions_take_the_own_slot_from_the_policy_and_the_rest_from_the_buffer():
    # Two agents, one transition, 1-D actions: buffer [0.1, 0.2], current policies [0.7, 0.9].
    # Agent 0's joint action: [0.7 (its policy), 0.2 (agent 1's replayed)]; agent 1's:
    # [0.1 (agent 0's replayed), 0.9 (its policy)].
    buffer_actions = tf.constant([[[0.1], [0.2]]])
    policy_actions = tf.Variable([[[0.7], [0.9]]])
    with tf.GradientTape(persistent=True) as tape:
        joint = maddpg_joint_actions(buffer_actions, policy_actions)
        first, second = tf.reduce_sum(joint[0]), tf.reduce_sum(joint[1])
    assert joint.shape == (2, 1, 2, 1)
    np.testing.assert_allclose(joint.numpy()[0, 0, :, 0], [0.7, 0.2], rtol=1e-6)
    np.testing.assert_allclose(joint.numpy()[1, 0, :, 0], [0.1, 0.9], rtol=1e-6)
    # Gradients reach each agent's own slot only: d sum(joint_0) / d policy = [1, 0], ...
    np.testing.assert_allclose(tape.gradient(first, policy_actions).numpy()[0, :, 0], [1, 0])
    np.testing.assert_allclose(tape.gradient(second, policy_actions).numpy()[0, :, 0], [0, 1])


def test_actor_loss_by_hand():
    # Q_0 at agent 0's joint actions [1, 3], Q_1 at agent 1's [2, 4]:
    # -(mean(1, 3) + mean(2, 4)) = -(2 + 3) = -5.
    assert float(maddpg_actor_loss(tf.constant([[1.0, 3.0], [2.0, 4.0]]))) == pytest.approx(-5.0)


# ------------------------------------------------------------------------------- agent
def make_agent(overrides: str = "", env_id: str = SPREAD, env_kwargs=None, num_envs: int = 1):
    hp = registry.get_hparams("maddpg_tiny")()
    hp.jit_compile = False  # seconds of XLA compile per test; training tests run XLA
    hp.override(overrides)
    hp.env = env_id
    hp.env_kwargs = hp.env_kwargs if env_kwargs is None else env_kwargs
    hp.num_envs = num_envs
    hp.freeze()
    env, spec = make_vector_env(env_id, num_envs, seed=0, env_kwargs=hp.env_kwargs)
    tf.keras.utils.set_random_seed(0)  # the same initial weights in every run
    return registry.get_agent("maddpg")(spec, hp, seed=0), env, spec


def random_obs(spec, n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, *spec.obs_shape)).astype(np.float32)


def test_one_actor_per_agent_acting_on_its_own_observation_row():
    agent, _, spec = make_agent("learning_starts=0", env_kwargs={"N": 3, "max_cycles": 10})
    assert spec.obs_shape == (3, 18) and spec.action_shape == (3, 5)
    obs = random_obs(spec, 4)
    greedy = agent.greedy_actions(obs)
    assert greedy.shape == (4, 3, 5)
    for i in range(3):  # row i is actor i on observation row i
        np.testing.assert_allclose(
            greedy[:, i], getattr(agent, f"actor_{i}")(obs[:, i]).numpy(), atol=1e-6
        )  # compiled vs eager: float rounding only
    changed = obs.copy()
    changed[:, 1] += 5.0  # another agent's observation changes: agents 0 and 2 act the same
    moved = agent.greedy_actions(changed)
    np.testing.assert_array_equal(moved[:, [0, 2]], greedy[:, [0, 2]])
    assert not np.allclose(moved[:, 1], greedy[:, 1])


def test_exploration_noise_statistics_and_bounds():
    # std 0.05 of the half-range 0.5 -> 0.025 per entry. The statistics use the entries whose
    # greedy action lies in [0.2, 0.8], 8 standard deviations inside the bounds [0, 1], where
    # clipping does not happen.
    agent, _, spec = make_agent("learning_starts=0,action_noise_std=0.05")
    obs = tf.constant(np.repeat(random_obs(spec, 1), 20000, axis=0))
    greedy = agent.act(obs, explore=False).numpy()
    noisy = agent.act(obs, explore=True).numpy()
    assert noisy.min() >= 0.0 and noisy.max() <= 1.0
    inside = (greedy[0] > 0.2) & (greedy[0] < 0.8)  # [N, A], the same in every row
    assert inside.sum() >= 3, greedy[0]
    noise = (noisy - greedy)[:, inside]
    assert noise.mean() == pytest.approx(0.0, abs=0.001)
    assert noise.std() == pytest.approx(0.025, abs=0.0005)


def test_padded_action_entries_are_always_zero():
    # speaker_listener: the speaker has 3 actions, the listener 5, so the speaker's row is
    # padded with two entries whose bounds are [0, 0].
    agent, _, spec = make_agent("learning_starts=1000", env_id=SPEAKER_LISTENER, env_kwargs={})
    assert spec.action_shape == (2, 5)
    obs = tf.constant(random_obs(spec, 500) * 10.0)
    for explore in (False, True):  # True: the uniform warm-up actions, learning_starts=1000
        action = agent.act(obs, explore=explore).numpy()
        np.testing.assert_array_equal(action[:, 0, 3:], 0.0)
        assert (action >= spec.action_low).all() and (action <= spec.action_high).all()


def test_own_q_is_critic_i_at_agent_is_joint_action():
    # The batched diagonal of `own_q` against a direct loop over agents.
    agent, _, spec = make_agent()
    obs = tf.constant(random_obs(spec, 3))
    rng = np.random.default_rng(1)
    joint = tf.constant(rng.uniform(0, 1, size=(2, 3, *spec.action_shape)), tf.float32)
    own = agent.own_q(obs, joint).numpy()
    for i in range(2):
        np.testing.assert_allclose(own[i], agent.critics(obs, joint[i]).numpy()[i], rtol=1e-5)


def test_update_trains_all_agents_and_moves_targets_by_tau():
    agent, env, spec = make_agent("learning_starts=0,gradient_steps=1,tau=0.5,jit_compile=false")
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(60)
    weights = {name: [w.copy() for w in getattr(agent, name).get_weights()] for name in NETS}
    metrics = agent.update()
    assert {"train/loss", "train/actor_loss", "train/q_mean"} <= set(metrics)
    for name in ("actor_0", "actor_1", "critics"):
        after = getattr(agent, name).get_weights()
        assert any(not np.array_equal(a, b) for a, b in zip(weights[name], after, strict=True))
    for online, target in (("actor_0", "actor_target_0"), ("actor_1", "actor_target_1")) + (
        ("critics", "critics_target"),
    ):
        now, got = getattr(agent, online).get_weights(), getattr(agent, target).get_weights()
        for new, old, result in zip(now, weights[target], got, strict=True):
            np.testing.assert_allclose(result, 0.5 * new + 0.5 * old, rtol=1e-5, atol=1e-7)
    assert int(agent.learner.gradient_steps.numpy()) == 1


NETS = ("actor_0", "actor_1", "actor_target_0", "actor_target_1", "critics", "critics_target")


def test_actor_gradient_ignores_the_agents_own_replayed_action():
    # Agent i's actor loss reads the OTHER agents' replayed actions; its own replayed action is
    # replaced by its policy's, so changing it leaves agent i's term unchanged.
    agent, _, spec = make_agent()
    obs = tf.constant(random_obs(spec, 8))
    rng = np.random.default_rng(2)
    replayed = rng.uniform(0, 1, size=(8, *spec.action_shape)).astype(np.float32)
    policy = agent.joint_action(obs)

    def own_q(actions):
        return agent.own_q(obs, maddpg_joint_actions(tf.constant(actions), policy)).numpy()

    base = own_q(replayed)
    mine = replayed.copy()
    mine[:, 0] = 1.0 - mine[:, 0]  # agent 0's replayed action only
    np.testing.assert_allclose(own_q(mine)[0], base[0], rtol=1e-6)
    assert not np.allclose(own_q(mine)[1], base[1])  # agent 1's critic sees agent 0's action


def test_checkpoint_holds_every_actor_and_critic(tmp_path):
    agent, *_ = make_agent()
    for net in NETS:  # weights no fresh agent could have by chance
        for variable in getattr(agent, net).variables:
            variable.assign_add(tf.ones_like(variable))
    path = tf.train.Checkpoint(agent=agent).write(str(tmp_path / "ckpt"))
    restored, *_ = make_agent()
    tf.train.Checkpoint(agent=restored).read(path).assert_consumed()
    for net in NETS:
        saved, loaded = getattr(agent, net).get_weights(), getattr(restored, net).get_weights()
        assert len(saved) == len(loaded) > 0
        for a, b in zip(saved, loaded, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=net)


def test_shared_actor_is_one_network_applied_to_every_row():
    agent, env, spec = make_agent(
        "share_actor=true,learning_starts=0,gradient_steps=1,jit_compile=false"
    )
    assert agent.num_actors == 1 and not hasattr(agent, "actor_1")
    obs = random_obs(spec, 4)
    greedy = agent.greedy_actions(obs)
    for i in range(2):
        np.testing.assert_allclose(greedy[:, i], agent.actor_0(obs[:, i]).numpy(), atol=1e-6)
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(60)
    before = [w.copy() for w in agent.actor_0.get_weights()]
    agent.update()
    after = agent.actor_0.get_weights()
    assert any(not np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    # Agents with different action bounds cannot share one squashed actor.
    with pytest.raises(UserError, match="same action bounds"):
        make_agent("share_actor=true", env_id=SPEAKER_LISTENER, env_kwargs={})


def test_refuses_single_agent_envs_and_several_critics():
    hp = registry.get_hparams("maddpg_tiny")()
    hp.freeze()
    _, spec = make_vector_env("Pendulum-v1", 1, seed=0)
    with pytest.raises(UserError, match=r"n_agents, obs_dim"):
        registry.get_agent("maddpg")(spec, hp, seed=0)
    with pytest.raises(UserError, match="num_critics=1"):
        make_agent("num_critics=2")
