"""The evaluation protocol (`eval` hparams group): epsilon, time limit, sticky actions, full
Atari games, validation, and where it is recorded."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from conftest import stderr_lines

import train
from rl import loop, registry
from rl.envs import make_vector_env
from rl.envs.factory import AUTORESET_MODE
from rl.errors import UserError
from rl.evaluation import evaluate, fresh_episode_policy, make_eval_env
from rl.hparams.common import base


class Endless(gym.Env):
    """Never ends by itself; counts the actions it receives (class-level, per process)."""

    actions: list[int] = []

    def __init__(self):
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(4)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        Endless.actions.append(int(action))
        return np.zeros(2, np.float32), 1.0, False, False, {}


class ConstantAgent:
    """Stands in for an Agent in `evaluate`, which only calls `greedy_actions`."""

    def __init__(self, action: int) -> None:
        self.action = action

    def greedy_actions(self, obs: np.ndarray) -> np.ndarray:
        return np.full(len(obs), self.action, np.int64)


def endless_vector_env(num_envs: int, limit: int) -> gym.vector.VectorEnv:
    return gym.vector.SyncVectorEnv(
        [lambda: gym.wrappers.TimeLimit(Endless(), limit)] * num_envs,
        autoreset_mode=AUTORESET_MODE,
    )


@pytest.mark.parametrize(
    "epsilon, share_of_greedy",
    # P(action 0) = (1 - eps) + eps / 4 with 4 actions.
    [(0.0, 1.0), (0.5, 0.625), (1.0, 0.25)],
)
def test_epsilon_replaces_greedy_actions_by_uniform_ones(epsilon, share_of_greedy):
    Endless.actions = []
    env = endless_vector_env(8, limit=500)
    result = evaluate(ConstantAgent(0), env, seed=1, epsilon=epsilon)
    actions = np.array(Endless.actions)
    assert len(actions) == 8 * 500
    assert np.mean(actions == 0) == pytest.approx(share_of_greedy, abs=0.03)
    if epsilon == 1.0:  # random-like: every action about as often
        assert np.allclose(np.bincount(actions, minlength=4) / len(actions), 0.25, atol=0.03)
    np.testing.assert_array_equal(result.lengths, [500] * 8)
    again = evaluate(ConstantAgent(0), endless_vector_env(8, 500), seed=1, epsilon=epsilon)
    np.testing.assert_array_equal(np.array(Endless.actions[-4000:]), actions)  # seeded
    assert again.return_mean == 500.0


@pytest.mark.parametrize("hparams_set", ["ppo_tiny", "ppo_recurrent_tiny"])
def test_sample_actions_draws_from_the_policy_and_greedy_takes_its_mode(hparams_set):
    """A new policy on Endless's constant zero observation: ppo_tiny's logits are exactly 0
    (zero input, zero biases), so greedy plays action 0 at every step and sampling plays the 4
    actions uniformly; the recurrent set's PyTorch-initialized biases make its policy non-uniform,
    but still not one action. Sampling follows the evaluation seed alone."""
    hp = registry.get_hparams(hparams_set)()
    hp.env = "test_eval_protocol:Endless"
    hp.eval.max_episode_steps = 100
    env, spec = make_eval_env(hp, num_envs=8, seed=0)
    agent = registry.get_agent(hp.agent)(spec, hp, seed=0)

    def played(seed: int, **options) -> np.ndarray:
        Endless.actions = []
        evaluate(agent, env, seed=seed, **options)
        assert len(Endless.actions) == 8 * 100
        return np.array(Endless.actions)

    greedy = played(3)  # the set's eval.sample_actions: False
    hp.eval.sample_actions = True  # the agent reads its own hparams' protocol
    sampled = played(3)
    shares = np.bincount(sampled, minlength=4) / len(sampled)
    if hparams_set == "ppo_tiny":
        np.testing.assert_array_equal(greedy, 0)
        np.testing.assert_allclose(shares, 0.25, atol=0.05)  # 5 binomial stds on 800 draws
    assert np.count_nonzero(shares > 0.05) >= 3 and len(set(greedy)) < len(set(sampled))
    np.testing.assert_array_equal(played(3, sample_actions=True), sampled)
    assert not np.array_equal(played(4, sample_actions=True), sampled)
    np.testing.assert_array_equal(played(4, sample_actions=False), greedy)
    env.close()
    # Videos and rendered episodes play the protocol's policy too, seeded.
    obs = np.zeros([1, 2], np.float32)
    filmed = [[int(p(obs)[0]) for _ in range(40)] for p in map(fresh_episode_policy, [agent] * 2)]
    assert filmed[0] == filmed[1] and len(set(filmed[0])) > 1


def test_max_episode_steps_caps_evaluation_episodes():
    hp = base()
    hp.env = "test_eval_protocol:Endless"
    hp.max_episode_steps = 1000
    hp.eval.max_episode_steps = 7
    env, _ = make_eval_env(hp, num_envs=3, seed=0)
    result = evaluate(ConstantAgent(2), env, seed=0)
    np.testing.assert_array_equal(result.lengths, [7, 7, 7])
    np.testing.assert_array_equal(result.returns, [7.0, 7.0, 7.0])
    hp.eval.max_episode_steps = None  # falls back to the training limit
    env, spec = make_eval_env(hp, num_envs=1, seed=0)
    assert spec.max_episode_steps == 1000


def test_sticky_actions_switch_for_atari_only():
    hp = base()
    hp.env = "ALE/Pong-v5"
    hp.env_kwargs = {"repeat_action_probability": 0.1}
    expected = {None: 0.1, True: 0.1, False: 0.0}
    for sticky, probability in expected.items():
        hp.eval.sticky_actions = sticky
        env, _ = make_eval_env(hp, num_envs=1, seed=0)
        ale = env.envs[0].unwrapped.ale
        assert ale.getFloat("repeat_action_probability") == pytest.approx(probability)
        env.close()
    hp.env_kwargs = {"repeat_action_probability": 0.0}
    hp.eval.sticky_actions = True  # on, though training had none: the standard 0.25
    env, _ = make_eval_env(hp, num_envs=1, seed=0)
    assert env.envs[0].unwrapped.ale.getFloat("repeat_action_probability") == pytest.approx(0.25)
    env.close()
    hp.env = "CartPole-v1"
    hp.env_kwargs = {}
    with pytest.raises(UserError, match="eval.sticky_actions=True applies to Atari envs only"):
        make_eval_env(hp, num_envs=1, seed=0)


def test_eval_env_kwargs_change_the_evaluation_env_only():
    """procgen's unseen levels, say: here an Atari option, readable off the wrappers."""
    hp = base()
    hp.env = "ALE/Pong-v5"
    hp.env_kwargs = {"noop_max": 30, "frame_skip": 4}
    hp.eval.env_kwargs = {"noop_max": 7}

    def preprocessing(env: gym.vector.VectorEnv) -> gym.wrappers.AtariPreprocessing:
        layer = env.envs[0]
        while not isinstance(layer, gym.wrappers.AtariPreprocessing):
            layer = layer.env
        return layer

    eval_env, _ = make_eval_env(hp, num_envs=1, seed=0)
    assert (preprocessing(eval_env).noop_max, preprocessing(eval_env).frame_skip) == (7, 4)
    eval_env.close()
    train_env, _ = make_vector_env(hp.env, 1, 0, env_kwargs=hp.env_kwargs)
    assert preprocessing(train_env).noop_max == 30
    train_env.close()


def test_atari_evaluation_plays_full_games_through_lost_lives():
    hp = base()
    hp.env = "ALE/Breakout-v5"
    hp.env_kwargs = {"terminal_on_life_loss": True, "clip_rewards": True}
    env, spec = make_eval_env(hp, num_envs=2, seed=0)
    assert spec.reports_game_score
    # FIRE only: the paddle never moves, so each game is 5 short lives.
    result = evaluate(ConstantAgent(1), env, seed=5, full_games=True)
    assert len(result.episode_returns) == 2 * 5  # one clipped return per life
    np.testing.assert_array_equal(result.returns, result.raw_scores)
    assert result.raw_scores.sum() >= result.episode_returns.sum()  # clipping only lowers
    metrics = result.metrics("eval")
    assert metrics["eval/raw_score_mean"] == pytest.approx(result.raw_scores.mean())
    assert metrics["eval/clipped_return_mean"] == pytest.approx(result.episode_returns.mean())
    env.close()


def test_step_budget_cuts_an_evaluation_and_reports_it(capsys):
    env = endless_vector_env(4, limit=1000)
    result = evaluate(ConstantAgent(0), env, seed=0, step_budget=100)
    np.testing.assert_array_equal(result.lengths, [25] * 4)  # 4 copies x 25 steps = 100
    np.testing.assert_array_equal(result.returns, [25.0] * 4)  # the return so far
    assert result.truncated_episodes == 4
    assert result.metrics("eval")["eval/truncated_episodes"] == 4.0
    assert "eval.step_budget=100 env steps: 4 of 4 episodes unfinished" in capsys.readouterr().out
    # A budget the episodes fit in cuts nothing; without a budget there is no metric.
    fits = evaluate(ConstantAgent(0), endless_vector_env(4, limit=10), seed=0, step_budget=100)
    assert fits.truncated_episodes == 0 and fits.metrics()["eval/truncated_episodes"] == 0.0
    plain = evaluate(ConstantAgent(0), endless_vector_env(4, limit=10), seed=0)
    assert plain.truncated_episodes is None and "eval/truncated_episodes" not in plain.metrics()
    assert "step_budget" not in capsys.readouterr().out


def test_step_budget_ends_an_atari_evaluation_a_stuck_policy_would_stall():
    # Without FIRE at reset, Breakout waits for a FIRE this NOOP-only policy never presses: the
    # game would run to its time limit. The budget cuts it; its raw score so far (0) counts.
    hp = base()
    hp.env = "ALE/Breakout-v5"
    hp.env_kwargs = {"terminal_on_life_loss": True, "fire_reset": False}
    hp.eval.step_budget = 300
    env, _ = make_eval_env(hp, num_envs=2, seed=0)
    result = evaluate(ConstantAgent(0), env, seed=0, full_games=True, step_budget=300)
    assert result.truncated_episodes == 2 and result.lengths.sum() == 300
    np.testing.assert_array_equal(result.raw_scores, [0.0, 0.0])
    assert len(result.episode_returns) == 0  # no life was lost: the ball never moved
    env.close()


@pytest.mark.parametrize(
    "hparams_set, override, message",
    [
        ("dqn_tiny", "eval.epsilon=1.5", "eval.epsilon must be in [0, 1]"),
        ("dqn_tiny", "eval.max_episode_steps=0", "eval.max_episode_steps must be >= 1"),
        ("dqn_tiny", "eval.sticky_actions=True", "applies to Atari envs only"),
        ("dqn_tiny", "eval.step_budget=0", "eval.step_budget must be >= 1"),
        ("dqn_tiny", "eval.sample_actions=True", "has no policy distribution to sample"),
        ("ppo_tf_tiny", "eval.epsilon=0.05", "the compiled path"),
        ("ppo_tf_tiny", "eval.sample_actions=True", "the compiled path"),
        ("ppo_tf_tiny", "eval.step_budget=1000", "the compiled path"),
        ("ppo_tf_tiny", "eval.env_kwargs={'a': 1}", "the compiled path"),
        ("ppo_atari_tiny", "eval.env_kwargs={'nop_max': 0}", "did you mean 'noop_max'"),
    ],
)
def test_bad_protocol_is_one_line_exit_2_before_any_training(
    hparams_set, override, message, tmp_path, capsys, monkeypatch
):
    def refuse(*args, **kwargs):
        raise AssertionError("train.main reached the loop: the mistake was not caught up front")

    monkeypatch.setattr(loop, "train", refuse)
    out = tmp_path / "out"
    capsys.readouterr()
    status = train.main(["--hparams", hparams_set, "--output_dir", str(out)]
                        + ["--hparam_override", override])  # fmt: skip
    lines = stderr_lines(capsys.readouterr().err)
    assert status == 2
    assert len(lines) == 1 and message in lines[0], lines
    assert not out.exists()
