"""CMA-ES: the optimizer against hand-checkable properties, and the agent's episode scoring
across generation switches and checkpoint cuts (by hand, and through the real Driver)."""

import math

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401
from rl import registry
from rl.agents.cma_es_optimizer import CMAES, expected_norm, recombination_weights
from rl.agents.cmaes import CMAESAgent, EpisodeScorer, num_params
from rl.envs import make_vector_env
from rl.envs.spec import EnvSpec
from rl.errors import UserError
from rl.rollout.driver import Driver


# --------------------------------------------------------------------------- optimizer
def test_recombination_weights_by_hand():
    # lambda = 6, mu = 3: ln(3.5) - ln(1, 2, 3) = 1.252763, 0.559616, 0.154151; sum 1.966530.
    np.testing.assert_allclose(recombination_weights(6), [0.637043, 0.284571, 0.078387], atol=1e-6)
    # lambda = 5, mu = 2: ln 3 - ln(1, 2) = 1.098612, 0.405465 -> / 1.504077.
    np.testing.assert_allclose(recombination_weights(5), [0.730423, 0.269577], atol=1e-6)
    with pytest.raises(ValueError, match="at least 2"):
        recombination_weights(1)


def test_expected_norm_matches_monte_carlo():
    rng = np.random.default_rng(0)
    for n in (1, 3, 10):
        sampled = np.linalg.norm(rng.standard_normal((200_000, n)), axis=1).mean()
        assert expected_norm(n) == pytest.approx(sampled, rel=0.01)


def test_first_generation_by_hand():
    # lambda = 4: w = [ln 2.5, ln 2.5 - ln 2] / sum = [0.804163, 0.195837],
    # mu_eff = 1 / (0.804163^2 + 0.195837^2) = 1.459790.
    es = CMAES(mean=np.array([1.0, 2.0]), sigma=0.5, popsize=4, seed=0)
    assert es.mu_eff == pytest.approx(1.459790, rel=1e-6)
    es.ask()
    es.population_y = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [-1.0, -1.0]])
    es.tell(np.array([3.0, 1.0, 4.0, 2.0]))  # best: row 1, then row 3
    # <y>_w = 0.804163 [0, 1] + 0.195837 [-1, -1] = [-0.195837, 0.608326]
    y_w = np.array([-0.195837, 0.608326])
    # m' = m + c_m sigma <y>_w = [1, 2] + 0.5 <y>_w
    np.testing.assert_allclose(es.mean, [0.902082, 2.304163], atol=1e-6)
    # C = I so C^(-1/2) = I and p_sigma starts at 0: p_sigma = sqrt(c_s (2 - c_s) mu_eff) <y>_w
    # with c_s = (mu_eff + 2) / (n + mu_eff + 5) = 3.459790 / 8.459790 = 0.408967.
    c_s = 3.459790 / 8.459790
    assert es.c_sigma == pytest.approx(c_s, rel=1e-6)
    np.testing.assert_allclose(es.p_sigma, math.sqrt(c_s * (2 - c_s) * 1.459790) * y_w, rtol=1e-5)
    # sigma' = sigma exp(c_s / d_s (|p_s| / E|N(0, I)| - 1)), d_s = 1 + c_s (mu_eff < n + 2).
    ratio = np.linalg.norm(es.p_sigma) / expected_norm(2)
    assert es.sigma == pytest.approx(0.5 * math.exp(c_s / (1 + c_s) * (ratio - 1)), rel=1e-6)
    assert es.generation == 1 and not es.pending


def test_mean_learning_rate_scales_the_step():
    steps = []
    for mean_lr in (1.0, 0.25):
        es = CMAES(np.zeros(3), sigma=1.0, popsize=6, seed=3, mean_lr=mean_lr)
        x = es.ask()
        es.tell(np.sum(x**2, axis=1))
        steps.append(es.mean)
    np.testing.assert_allclose(steps[1], 0.25 * steps[0], rtol=1e-12)


@pytest.mark.parametrize("diagonal", [False, True])
def test_converges_on_a_shifted_sphere(diagonal):
    optimum = np.array([1.0, -2.0, 0.5, 3.0, -1.0])
    es = CMAES(np.zeros(5), sigma=1.0, popsize=8, seed=1, diagonal=diagonal)
    for _ in range(250):
        x = es.ask()
        es.tell(np.sum((x - optimum) ** 2, axis=1))
    np.testing.assert_allclose(es.mean, optimum, atol=1e-5)
    assert es.sigma < 1e-4


def test_full_covariance_learns_a_rotated_ellipsoid():
    # f(x) = sum_i 10^(4 i / (n-1)) (Rx)_i^2: condition number 1e4 in rotated axes. Full CMA
    # learns C ~ H^-1, so its axis ratio approaches sqrt(1e4) = 100; the diagonal variant
    # cannot represent the rotation.
    n = 6
    rotation, _ = np.linalg.qr(np.random.default_rng(7).standard_normal((n, n)))
    scales = 10.0 ** (4 * np.arange(n) / (n - 1))

    def f(x):
        return np.sum(scales * (x @ rotation.T) ** 2, axis=1)

    results = {}
    for diagonal in (False, True):
        es = CMAES(np.ones(n), sigma=1.0, popsize=10, seed=2, diagonal=diagonal)
        for _ in range(400):
            es.tell(f(es.ask()))
        results[diagonal] = (float(f(es.mean[None])[0]), es.axis_ratio)
    assert results[False][0] < 1e-12
    assert 50 < results[False][1] < 200
    assert results[True][0] > 1e3 * results[False][0]


def test_sigma_grows_on_a_linear_function():
    # On f(x) = x_0 there is no optimum: selection keeps pushing the mean the same way,
    # p_sigma grows longer than a random walk's, and cumulative step-size adaptation grows sigma.
    for diagonal in (False, True):
        es = CMAES(np.zeros(4), sigma=1.0, popsize=8, seed=4, diagonal=diagonal)
        mean_0 = []
        for _ in range(20):
            x = es.ask()
            es.tell(x[:, 0])
            mean_0.append(es.mean[0])
        assert es.sigma > 10.0
        assert np.all(np.diff(mean_0) < 0)  # every generation moved downhill


def test_ask_tell_misuse():
    es = CMAES(np.zeros(2), sigma=1.0, popsize=4, seed=0)
    with pytest.raises(RuntimeError, match="ask"):
        es.tell(np.zeros(4))
    es.ask()
    with pytest.raises(ValueError, match="4 losses"):
        es.tell(np.zeros(3))
    with pytest.raises(ValueError, match="non-finite"):
        es.tell(np.array([0.0, np.nan, 1.0, 2.0]))


@pytest.mark.parametrize("diagonal", [False, True])
def test_state_dict_resumes_bit_for_bit(diagonal):
    def run(es, generations):
        for _ in range(generations):
            x = es.ask()
            es.tell(np.sum(x**2, axis=1) + x[:, 0])

    straight = CMAES(np.ones(4), sigma=0.7, popsize=6, seed=5, diagonal=diagonal)
    run(straight, 7)
    pending = straight.ask()  # save with a population out, as the agent does
    state = {k: np.array(v) for k, v in straight.state_dict().items()}

    resumed = CMAES(np.zeros(4), sigma=2.0, popsize=6, seed=99, diagonal=diagonal)
    resumed.load_state_dict(state)
    np.testing.assert_array_equal(resumed.mean + resumed.sigma * resumed.population_y, pending)
    for es in (straight, resumed):
        es.tell(np.sum(pending**2, axis=1))
        run(es, 5)
    for key, value in straight.state_dict().items():
        np.testing.assert_array_equal(resumed.state_dict()[key], value, err_msg=key)
    with pytest.raises(ValueError, match="checkpoint holds"):
        CMAES(np.zeros(5), 1.0, 6, 0, diagonal=diagonal).load_state_dict(state)


# ----------------------------------------------------------------------------- scoring
def test_scorer_takes_the_first_whole_episode_after_a_generation_switch():
    scorer = EpisodeScorer(2)
    no, yes = np.array([False, False]), np.array([True, False])
    # Both envs start fresh. Env 0 plays an episode of returns 1 + 2 = 3; env 1 keeps going.
    scorer.observe(np.array([1.0, 5.0]), no)
    scorer.observe(np.array([2.0, 5.0]), yes)
    assert scorer.fitness[0] == 3.0 and np.isnan(scorer.fitness[1])
    # Env 0's next episode (reward 100) does not overwrite its score.
    scorer.observe(np.array([100.0, 5.0]), yes)
    assert scorer.fitness[0] == 3.0 and not scorer.complete()
    scorer.observe(np.array([0.0, 5.0]), np.array([False, True]))
    np.testing.assert_array_equal(scorer.fitness, [3.0, 20.0])
    assert scorer.complete()

    # A new generation while env 0 is mid-episode and env 1 just finished one: env 0's running
    # episode (7 so far, +1) is discarded, its next one (4 + 6) counts; env 1 starts at once.
    scorer.observe(np.array([7.0, 1.0]), np.array([False, True]))
    scorer.new_generation()
    assert not scorer.complete()
    scorer.observe(np.array([1.0, 2.0]), yes)  # env 0's old episode ends
    scorer.observe(np.array([4.0, 2.0]), no)
    scorer.observe(np.array([6.0, 2.0]), np.array([True, True]))
    np.testing.assert_array_equal(scorer.fitness, [10.0, 6.0])


def test_scorer_discards_cut_episodes_and_replays_them():
    scorer = EpisodeScorer(2)
    scorer.observe(np.array([1.0, 1.0]), np.array([False, True]))  # env 1 scored: 1
    scorer.observe(np.array([1.0, 9.0]), np.array([False, False]))
    scorer.cut()  # checkpoint: env 0's 2-step episode is not whole
    assert np.isnan(scorer.fitness[0]) and scorer.fitness[1] == 1.0
    state = scorer.state_dict()
    resumed = EpisodeScorer(2)
    resumed.load_state_dict(state)
    for s in (scorer, resumed):  # after the reset env 0 plays a fresh episode: 3 + 4
        s.observe(np.array([3.0, 9.0]), np.array([False, False]))
        s.observe(np.array([4.0, 9.0]), np.array([True, False]))
        np.testing.assert_array_equal(s.fitness, [7.0, 1.0])
    with pytest.raises(ValueError, match="env copies"):
        EpisodeScorer(3).load_state_dict(state)


# ------------------------------------------------------------------------------- agent
class StopEarly(gym.Env):
    """Deterministic: obs [t, 1]; reward t + 1 per step; action 1 or t == 6 ends the episode.
    A policy's return depends on when it first picks action 1, so candidates finish episodes at
    different times (generation switches land mid-episode)."""

    observation_space = gym.spaces.Box(-10.0, 10.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0, 1.0], np.float32), {}

    def step(self, action):
        reward = float(self.t + 1)
        self.t += 1
        done = int(action) == 1 or self.t == 6
        return np.array([self.t / 6.0, 1.0], np.float32), reward, done, False, {}


def policy_return(params: np.ndarray, hidden: int) -> float:
    """StopEarly played in numpy by the flat float32 weights `params` (layout of the agent)."""
    env, total = StopEarly(), 0.0
    obs, _ = env.reset()
    w1 = params[: 2 * hidden].reshape(2, hidden)
    b1 = params[2 * hidden : 3 * hidden]
    w2 = params[3 * hidden : 5 * hidden].reshape(hidden, 2)
    b2 = params[5 * hidden :]
    done = False
    while not done:
        logits = np.tanh(obs @ w1 + b1) @ w2 + b2
        obs, reward, done, _, _ = env.step(int(np.argmax(logits)))
        total += reward
    return total


def cmaes_hparams(**changes):
    hp = registry.get_hparams("cmaes")()
    hp.hidden_sizes = [3]
    hp.train_every = 6
    for key, value in changes.items():
        setattr(hp, key, value)
    return hp


def stop_early_env(num_envs):
    env = gym.vector.SyncVectorEnv(
        [StopEarly for _ in range(num_envs)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    spec = EnvSpec.from_spaces(
        "StopEarly", num_envs, env.single_observation_space, env.single_action_space, 6
    )
    return env, spec


def test_fitness_through_the_driver_equals_each_candidate_played_alone():
    # 6 candidates in 6 env copies, collected in chunks of 2 vector steps with an update call
    # after each (as the trainer does) and checkpoint-style cuts now and then. Every fitness
    # CMA-ES is told must be the whole-episode return of that candidate's own weights.
    env, spec = stop_early_env(6)
    agent = CMAESAgent(spec, cmaes_hparams(num_envs=6, cmaes_sigma0=1.0), seed=0)
    assert agent.es.dimension == num_params([2, 3, 2]) == 17
    told = []
    tell = agent.es.tell

    def recording_tell(losses):
        told.append((agent.candidate_params.numpy().copy(), -np.asarray(losses)))
        tell(losses)

    agent.es.tell = recording_tell
    driver = Driver(env, spec, agent)
    driver.reset(seed=0)
    for chunk in range(60):
        driver.collect(2)
        metrics = agent.update()
        if metrics:
            assert metrics["train/generation"] == len(told)
        if chunk % 7 == 6:  # a checkpoint: cut every episode, reset the envs
            agent.end_all_episodes()
            driver.reset(seed=chunk)
    assert len(told) >= 5
    assert int(agent.learner.gradient_steps.numpy()) == len(told)
    for candidates, fitness in told:
        expected = [policy_return(params, 3) for params in candidates]
        np.testing.assert_array_equal(fitness, expected)
    # Candidates differ, so generations really had different episode lengths to line up.
    assert any(len(set(fitness)) > 1 for _, fitness in told)


def test_acting_uses_each_candidates_weights_and_greedy_uses_the_mean():
    env, spec = stop_early_env(4)
    agent = CMAESAgent(spec, cmaes_hparams(num_envs=4, cmaes_sigma0=2.0), seed=1)
    obs = np.array([[0.5, 1.0], [0.2, 1.0], [1.0, 1.0], [0.0, 1.0]], np.float32)
    candidates = agent.candidate_params.numpy()

    def forward(params, x):
        hidden = np.tanh(x @ params[:6].reshape(2, 3) + params[6:9])
        return np.argmax(hidden @ params[9:15].reshape(3, 2) + params[15:], axis=-1)

    explore = agent.act(tf.constant(obs), explore=True).numpy()
    np.testing.assert_array_equal(
        explore, [forward(p, o) for p, o in zip(candidates, obs, strict=True)]
    )
    agent.mean_params.assign(candidates[2])  # greedy acting: one shared weight vector
    np.testing.assert_array_equal(agent.greedy_actions(obs), forward(candidates[2], obs))
    env.close()
    # Test mode builds the agent on `--test_episodes` env copies: the population (and so the
    # checkpoint's variable shapes) still follows num_envs, and greedy acting any batch.
    env, spec = stop_early_env(3)
    agent = CMAESAgent(spec, cmaes_hparams(num_envs=4), seed=1)
    assert agent.candidate_params.shape == (4, 17) and agent.scorer.fitness.shape == (4,)
    assert agent.greedy_actions(obs[:3]).shape == (3,)
    env.close()


def test_update_tells_cma_es_and_installs_the_next_generation():
    env, spec = stop_early_env(4)
    agent = CMAESAgent(spec, cmaes_hparams(num_envs=4, lr=0.5), seed=2)
    before_candidates = agent.candidate_params.numpy().copy()
    y = agent.es.population_y.copy()
    assert agent.update() == {}  # nobody has a fitness yet
    rewards = np.array([1.0, 4.0, 2.0, 3.0])
    done = np.ones(4, bool)
    agent.observe({"reward": rewards, "terminated": done, "truncated": ~done})
    metrics = agent.update()
    # Fitness [1, 4, 2, 3]: best rows 1 then 3; m' = m + c_m sigma (w_1 y_1 + w_2 y_3) with
    # c_m = lr = 0.5 and the lambda = 4 weights [0.804163, 0.195837]; m = 0 at the start.
    expected_mean = 0.5 * 0.5 * (0.804163 * y[1] + 0.195837 * y[3])
    np.testing.assert_allclose(agent.es.mean, expected_mean, atol=1e-6)
    np.testing.assert_allclose(agent.mean_params.numpy(), expected_mean, atol=1e-6)
    assert metrics["train/loss"] == -2.5 and metrics["train/fitness_max"] == 4.0
    assert metrics["train/generation"] == 1.0 and int(agent.learner.gradient_steps.numpy()) == 1
    after = agent.candidate_params.numpy()
    assert not np.array_equal(after, before_candidates)
    np.testing.assert_allclose(
        after, agent.es.mean + agent.es.sigma * agent.es.population_y, rtol=1e-6, atol=1e-6
    )
    assert agent.metrics()["train/learning_rate"] == 0.5
    assert np.isnan(agent.scorer.fitness).all()  # the new generation is unscored
    env.close()


def test_box_actions_are_squashed_into_the_bounds():
    env, spec = make_vector_env("Pendulum-v1", 3, 0)
    agent = CMAESAgent(spec, cmaes_hparams(num_envs=3, cmaes_sigma0=50.0), seed=0)
    obs = np.random.default_rng(0).uniform(-1, 1, (3, 3)).astype(np.float32)
    actions = agent.act(tf.constant(obs), explore=True).numpy()
    assert actions.shape == (3, 1)
    assert np.all(np.abs(actions) <= 2.0) and np.abs(actions).max() > 1.0
    env.close()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"num_envs": 1}, "num_envs is its population size and must be >= 2"),
        ({"checkpoint_every": 1000}, "set checkpoint_every >= 3006"),
        ({"cmaes_sigma0": 0.0}, "cmaes_sigma0 must be > 0"),
    ],
)
def test_bad_settings_are_user_errors(changes, message):
    changes = {"num_envs": 3, **changes}
    env, spec = make_vector_env("CartPole-v1", changes["num_envs"], 0, max_episode_steps=1000)
    with pytest.raises(UserError, match=message):
        CMAESAgent(spec, cmaes_hparams(**changes), seed=0)
    env.close()
