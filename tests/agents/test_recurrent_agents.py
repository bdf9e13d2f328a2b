"""The recurrent-state contract (driver, greedy evaluation, cuts) and the recurrent learners'
correctness: recurrent PPO's sequences reproduce the acting-time log-probs, DRQN's sequence loss
matches a step-by-step computation by hand."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf
from gymnasium.vector import AutoresetMode

import rl.errors
from rl import registry
from rl.agents.drqn import sequence_n_step_targets, sequence_priority
from rl.envs import make_vector_env
from rl.envs.spec import EnvSpec
from rl.rollout.driver import Driver


class CountEnv(gym.Env):
    """obs = (steps into the episode, env id); every episode terminates after `length` steps."""

    observation_space = gym.spaces.Box(-100.0, 100.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, length: int, ident: float) -> None:
        self.length, self.ident, self.t = length, ident, 0

    def _obs(self) -> np.ndarray:
        return np.array([self.t, self.ident], np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        return self._obs(), 1.0, self.t >= self.length, False, {}


def count_envs() -> tuple[gym.vector.VectorEnv, EnvSpec]:
    """Env 0 ends its episodes every 2 steps, env 1 every 3."""
    env = gym.vector.SyncVectorEnv(
        [lambda: CountEnv(2, 0.5), lambda: CountEnv(3, -0.5)],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    spec = EnvSpec.from_spaces(
        "count", 2, env.single_observation_space, env.single_action_space, None
    )
    return env, spec


def make_agent(hparams_set: str, spec: EnvSpec, overrides: str = ""):
    hp = registry.get_hparams(hparams_set)()
    hp.jit_compile = False  # seconds of XLA compile per test; training tests run XLA
    hp.override(overrides)
    hp.freeze()
    tf.keras.utils.set_random_seed(0)  # the same initial weights in every test run
    return registry.get_agent(hp.agent)(spec, hp, seed=0)


def record_observations(agent) -> list[dict]:
    seen = []
    original = agent.observe

    def observe(transition):
        seen.append({k: np.array(v, copy=True) for k, v in transition.items()})
        original(transition)

    agent.observe = observe
    return seen


def core_state(agent, obs: np.ndarray, state: np.ndarray) -> np.ndarray:
    """The state after one core step (it does not depend on the action taken)."""
    return agent.greedy_policy_step(tf.constant(obs), tf.constant(state))[1].numpy()


@pytest.mark.parametrize("hparams_set", ["ppo_recurrent_tiny", "drqn_tiny"])
def test_driver_resets_the_state_where_episodes_start(hparams_set):
    env, spec = count_envs()
    # Frozen observation statistics, so that a core step after acting gives the acting state.
    agent = make_agent(hparams_set, spec, "normalize_obs=False" if "ppo" in hparams_set else "")
    assert agent.recurrent
    seen = record_observations(agent)
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(7)
    state_in = np.stack([step["state_in"] for step in seen])  # [7, 2 envs, S]
    # By hand: env 0 (2-step episodes) starts episodes at steps 0, 2, 4, 6; env 1 (3-step) at
    # 0, 3, 6. Exactly there the state is zeros.
    starts = {0: [0, 2, 4, 6], 1: [0, 3, 6]}
    for e, at in starts.items():
        zero = ~np.any(state_in[:, e] != 0, axis=-1)
        np.testing.assert_array_equal(np.flatnonzero(zero), at, err_msg=f"env {e}")
    # Elsewhere it is the state the core reached from zeros over this episode's observations.
    for e, at in starts.items():
        for t in range(7):
            if t in at:
                state = np.zeros([1, agent.state_size], np.float32)
            else:
                np.testing.assert_allclose(state_in[t, e], state[0], rtol=1e-5, atol=1e-6)
            state = core_state(agent, seen[t]["obs"][e : e + 1], state)
    # The trainer's cut zeroes every state, and the next acting step starts from zeros too.
    agent.end_all_episodes()
    np.testing.assert_array_equal(agent.recurrent_state.numpy(), 0.0)
    driver.collect(1)
    assert np.any(agent.recurrent_state.numpy() != 0)
    driver.reset(seed=1)
    driver.collect(1)
    np.testing.assert_array_equal(seen[-1]["state_in"], 0.0)
    env.close()


def test_greedy_state_is_its_own_and_restarts_where_told():
    env, spec = count_envs()
    agent = make_agent("ppo_recurrent_tiny", spec)
    training_state = agent.recurrent_state.numpy().copy()
    obs = np.array([[0.0, 1.0], [0.0, 2.0]], np.float32)
    zeros = np.zeros([2, agent.state_size], np.float32)
    agent.greedy_actions(obs)  # first call: zero state
    after_one = core_state(agent, obs, zeros)
    np.testing.assert_allclose(agent.greedy_state.numpy(), after_one, rtol=1e-5, atol=1e-6)
    # Row 1 starts an episode, row 0 continues.
    agent.greedy_actions(obs, np.array([False, True]))
    expected = core_state(agent, obs, np.stack([after_one[0], zeros[1]]))
    np.testing.assert_allclose(agent.greedy_state.numpy(), expected, rtol=1e-5, atol=1e-6)
    # No flags: every row continues.
    agent.greedy_actions(obs)
    expected = core_state(agent, obs, expected)
    np.testing.assert_allclose(agent.greedy_state.numpy(), expected, rtol=1e-5, atol=1e-6)
    # Another batch size (another evaluation env): fresh zeros.
    agent.greedy_actions(obs[:1])
    np.testing.assert_allclose(agent.greedy_state.numpy(), after_one[:1], rtol=1e-5, atol=1e-6)
    # Greedy play never touches the training envs' state.
    np.testing.assert_array_equal(agent.recurrent_state.numpy(), training_state)
    env.close()


# Core first, unit-scale weights make the policy nearly deterministic: smaller weights there.
@pytest.mark.parametrize(("core_first", "scale"), [(False, 1.0), (True, 0.3)])
def test_sequence_minibatches_reproduce_the_acting_log_probs(core_first, scale):
    # 5-step episodes (time limit) inside 16-step sequences of 32-step chunks, 2 envs. Frozen
    # observation statistics: with running ones, acting used the statistics of its step and
    # the learner the rollout's last (test_normalized_rollouts_start_with_ratio_one).
    env, spec = make_vector_env("MaskedCartPole-v1", 2, seed=0, max_episode_steps=5)
    agent = make_agent(
        "ppo_recurrent_tiny",
        spec,
        f"max_episode_steps=5,normalize_obs=False,recurrent_core_first={core_first}",
    )
    # Random weights of unit scale instead of the near-uniform initial policy (gain 0.01), so
    # log-probs and values depend strongly on the recurrent state: a wrong state would show.
    rng = np.random.default_rng(0)
    for variable in agent.model.trainable_variables:
        variable.assign(scale * rng.normal(size=variable.shape).astype(np.float32))
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(agent.steps_per_iteration)
    assert agent.rollout.full()
    batch = {**agent.rollout.data(), "state_in": agent.rollout_states.array}
    acting_log_prob, acting_value = batch["log_prob"].copy(), batch["value"].copy()
    assert batch["truncated"].any() and batch["terminated"].sum() + batch["truncated"].sum() > 4
    assert acting_log_prob.min() < -1.0  # far from uniform (log 0.5 = -0.69)
    sequences, replayed = tf.function(agent.training_sequences)(batch)
    # The learner's replay of whole chunks gives the acting-time numbers...
    np.testing.assert_allclose(replayed["log_prob"], acting_log_prob, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(replayed["value"], acting_value, rtol=1e-5, atol=1e-5)
    # ... and so does unrolling each 16-step training sequence from its stored state.
    params, value, _ = agent.model.unroll(
        sequences["obs"], sequences["initial_state"], sequences["episode_start"]
    )
    log_prob = agent.model.distribution(params).log_prob(sequences["action"])
    np.testing.assert_allclose(log_prob, agent.to_sequences(acting_log_prob), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(value, agent.to_sequences(acting_value), rtol=1e-5, atol=1e-5)
    # Hence PPO's ratio is exactly 1 on the first minibatch: nothing clipped, KL 0.
    _, aux = agent.minibatch_loss(sequences)
    assert float(aux["clip_fraction"]) == 0.0
    assert abs(float(aux["approx_kl"])) < 1e-6
    env.close()


def test_normalized_rollouts_start_with_ratio_one_and_scaled_rewards():
    # ppo_recurrent_tiny normalizes observations (statistics move at every acting step) and
    # rewards (VecNormalize's return scaling). The learner re-computes the old log-probs with
    # the statistics at the update, so PPO's ratio is still exactly 1 before the first step.
    env, spec = make_vector_env("MaskedCartPole-v1", 2, seed=0, max_episode_steps=5)
    agent = make_agent("ppo_recurrent_tiny", spec, "max_episode_steps=5")
    assert agent.model.obs_normalizer is not None and agent.reward_scaler is not None
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    driver.collect(agent.steps_per_iteration)
    # Every observation acted on (32 steps x 2 envs) entered the statistics once.
    count = float(agent.model.obs_normalizer.count.numpy())
    assert count == pytest.approx(1e-4 + 64, rel=1e-6)
    batch = {**agent.rollout.data(), "state_in": agent.rollout_states.array}
    mean = batch["obs"].reshape(-1, 2).mean(axis=0)  # the prior's weight 1e-4 is negligible
    np.testing.assert_allclose(agent.model.obs_normalizer.mean.numpy(), mean, atol=1e-4)
    # CartPole pays 1 per step; the scaled rewards are 1 / sqrt(Var[return] + 1e-8), with the
    # variance growing as returns grow: positive, at most the clip 10, not all the same.
    reward = batch["reward"]
    assert (reward > 0).all() and (reward <= 10.0).all() and np.ptp(reward) > 0.01
    step = 20  # the scaler's variance after step 20 gives step 20's scaled rewards
    scaler = type(agent.reward_scaler)(2, agent.hparams.gamma)
    done = np.logical_or(batch["terminated"], batch["truncated"])
    for t in range(step + 1):
        expected = scaler(np.ones(2), done[t])
    np.testing.assert_allclose(reward[step], expected, rtol=1e-6)
    sequences, _ = tf.function(agent.training_sequences)(batch)
    _, aux = agent.minibatch_loss(sequences)
    assert float(aux["clip_fraction"]) == 0.0
    assert abs(float(aux["approx_kl"])) < 1e-6
    env.close()


def test_drqn_sequence_loss_by_hand():
    _, spec = make_vector_env("MaskedCartPole-v1", 1, seed=0)
    agent = make_agent("drqn_tiny", spec, "memory=uniform,n_step=1")
    hp = agent.hparams
    steps, batch = hp.burn_in + hp.sequence_length, 2  # T = 3 + 6 = 9
    rng = np.random.default_rng(0)
    mask = np.zeros([batch, steps], np.float32)
    mask[0, 0:6] = 1.0  # an episode's first window: no burn-in, 6 learning steps
    mask[1, 3:7] = 1.0  # burn-in 3, then 4 learning steps and padding
    sample = {
        "obs": rng.normal(size=[batch, steps + 1, 2]).astype(np.float32),
        "action": rng.integers(0, 2, size=[batch, steps]),
        "reward": rng.normal(size=[batch, steps]).astype(np.float32),
        "discount": np.where(rng.random([batch, steps]) < 0.2, 0.0, 0.9).astype(np.float32),
        "mask": mask,
        "burn_in": np.array([0, 3], np.int32),
        "state": rng.normal(size=[batch, agent.state_size]).astype(np.float32),
        "weights": np.array([1.0, 0.5], np.float32),
    }
    # Make the target network differ from the online one.
    for variable in agent.target_network.trainable_variables:
        variable.assign(variable * 0.5)
    loss, aux = agent.loss({k: tf.constant(v) for k, v in sample.items()})
    # By hand: step each network through each item from its stored state.
    total, count = 0.0, 0
    for b in range(batch):
        q, q_target = [], []
        state_online = state_target = sample["state"][b : b + 1]
        for t in range(steps + 1):
            obs = tf.constant(sample["obs"][b, t : t + 1])
            out, state_online = agent.q_network.step(obs, state_online)
            out_target, state_target = agent.target_network.step(obs, state_target)
            q.append(out.numpy()[0])
            q_target.append(out_target.numpy()[0])
        for t in range(steps):
            if not mask[b, t]:
                continue
            next_action = np.argmax(q[t + 1])  # double Q: online picks, target evaluates
            target = (
                sample["reward"][b, t] + sample["discount"][b, t] * q_target[t + 1][next_action]
            )
            error = target - q[t][sample["action"][b, t]]
            np.testing.assert_allclose(aux["td_error"][b, t], error, rtol=1e-4, atol=1e-5)
            huber = 0.5 * error**2 if abs(error) <= 1 else abs(error) - 0.5
            total += sample["weights"][b] * huber
            count += 1
    assert count == 10
    np.testing.assert_allclose(float(loss), total / count, rtol=1e-4)


def test_sequence_n_step_targets_by_hand():
    # One sequence of 4 real steps and 1 padding step; rewards 1, 2, 3, 4; discount 0.5
    # everywhere except step 2, which terminates (0). values[j] = 10 j (bootstrap of obs j).
    reward = tf.constant([[1.0], [2.0], [3.0], [4.0], [0.0]])
    discount = tf.constant([[0.5], [0.5], [0.0], [0.5], [0.0]])
    valid = tf.constant([[1.0], [1.0], [1.0], [1.0], [0.0]])
    values = tf.constant([[0.0], [10.0], [20.0], [30.0], [40.0], [50.0]])
    one = sequence_n_step_targets(reward, discount, valid, values, 1)[:, 0].numpy()
    # r_t + d_t v_{t+1}: 1 + 0.5*10, 2 + 0.5*20, 3 + 0*30, 4 + 0.5*40; padding 0.
    np.testing.assert_allclose(one, [6.0, 12.0, 3.0, 24.0, 0.0])
    three = sequence_n_step_targets(reward, discount, valid, values, 3)[:, 0].numpy()
    # t=0: 1 + 0.5*2 + 0.25*3 + (0.25*0)*v3 = 2.75 (the episode ends at step 2)
    # t=1: 2 + 0.5*3 + 0 = 3.5;  t=2: 3 (terminal);  t=3: only one real step left: 4 + 0.5*40.
    np.testing.assert_allclose(three, [2.75, 3.5, 3.0, 24.0, 0.0])
    # Without the termination, t=0 bootstraps from v3 with 0.5^3: 1 + 1 + 0.75 + 0.125*30.
    no_end = tf.constant([[0.5], [0.5], [0.5], [0.5], [0.0]])
    three = sequence_n_step_targets(reward, no_end, valid, values, 3)[:, 0].numpy()
    np.testing.assert_allclose(three[0], 1 + 1 + 0.75 + 0.125 * 30)
    # t=2: two real steps left (2, 3), then v4: 3 + 0.5*4 + 0.25*40 = 15.
    np.testing.assert_allclose(three[2], 15.0)


def test_sequence_priority_by_hand():
    # |delta| on the learning steps: [1, 3] (mask drops the 10) -> 0.9 * 3 + 0.1 * 2 = 2.9.
    td_error = tf.constant([[1.0, -3.0, 10.0]])
    mask = tf.constant([[1.0, 1.0, 0.0]])
    np.testing.assert_allclose(sequence_priority(td_error, mask, 0.9).numpy(), [2.9], rtol=1e-6)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ("sequence_length=5", "sequence_length=5 must divide the 32 steps"),
        ("recurrent_cell=rnn", "unknown recurrent_cell 'rnn'"),
    ],
)
def test_bad_recurrent_ppo_settings_are_user_errors(overrides, message):
    _, spec = make_vector_env("MaskedCartPole-v1", 2, seed=0)
    with pytest.raises(rl.errors.UserError, match=message):
        make_agent("ppo_recurrent_tiny", spec, overrides)


@pytest.mark.parametrize("hparams_set", ["ppo_recurrent_tiny", "drqn_tiny"])
def test_tf_ops_envs_are_refused_with_a_user_error(hparams_set):
    # The compiled path (rl/compiled) acts and learns without carried state.
    env, _ = count_envs()
    spec = EnvSpec.from_spaces(
        "tf/CartPole-v1", 2, env.single_observation_space, env.single_action_space, None
    )
    with pytest.raises(rl.errors.UserError, match="compiled path for TF-ops envs"):
        make_agent(hparams_set, spec)
    env.close()
