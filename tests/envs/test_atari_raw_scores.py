"""Raw game scores differ from clipped returns, shown on a real game (issue 16).

The raw-score checks in test_atari_train.py run on Pong and Breakout games of a few dozen steps
that score 0, so `raw == clipped` and `0 <= clipped <= raw` hold whatever the code does. Here a
scripted policy (always FIRE) plays Space Invaders, whose aliens are worth 5 to 30 points each,
so every hit is a single reward > 1 that clipping turns into 1. The env is the one `ppo_breakout`
trains on (its env_kwargs: sticky actions, episodic life, FIRE reset, clipped rewards, 4 frames)
with only the game swapped, and the numbers go through the two paths the logs are made from:

- training: `Driver` and its `EpisodeStats` (what `train/clipped_return_mean` and
  `train/raw_score_mean` are computed from in rl/engines/in_process.py), with the agent's view of
  each step checked against an unclipped twin env played with the same seed and actions;
- evaluation: `make_eval_env` + `evaluate(full_games=True)` and `EvalResult.metrics`, the
  `eval/raw_score_mean` and `eval/clipped_return_mean` columns.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rl import registry
from rl.envs import make_vector_env
from rl.evaluation import evaluate, make_eval_env
from rl.rollout.driver import Driver
from rl.rollout.episode_stats import true_next_obs

GAME = "ALE/SpaceInvaders-v5"
FIRE = 1  # SpaceInvaders' actions: NOOP, FIRE, RIGHT, LEFT, RIGHTFIRE, LEFTFIRE
STEPS = 300  # agent steps per game (TimeLimit below GameScore: the game ends, truncated)
SEED = 0


class AlwaysFire:
    """Stands in for an Agent in the `Driver` (act_with_info, observe, env_steps) and in
    `evaluate` (greedy_actions); keeps every transition it is shown."""

    recurrent = False

    def __init__(self) -> None:
        self.env_steps = tf.Variable(0, dtype=tf.int64, trainable=False)
        self.transitions: list[dict[str, np.ndarray]] = []

    def act_with_info(self, obs: tf.Tensor) -> tuple[tf.Tensor, dict]:
        return tf.fill([tf.shape(obs)[0]], tf.constant(FIRE, tf.int64)), {}

    def observe(self, transition: dict[str, np.ndarray]) -> None:
        self.transitions.append({k: np.copy(v) for k, v in transition.items()})

    def greedy_actions(self, obs: np.ndarray) -> np.ndarray:
        return np.full(len(obs), FIRE, np.int64)


def space_invaders_hparams():
    hp = registry.get_hparams("ppo_breakout")()
    hp.env = GAME
    hp.num_envs = 1
    hp.max_episode_steps = STEPS
    hp.eval.max_episode_steps = STEPS
    return hp


def test_training_stats_report_the_raw_score_and_clipped_rewards_apart():
    hp = space_invaders_hparams()
    assert hp.env_kwargs["clip_rewards"] and hp.env_kwargs["terminal_on_life_loss"]
    env, spec = make_vector_env(hp.env, 1, SEED, hp.env_kwargs, hp.max_episode_steps)
    agent = AlwaysFire()
    driver = Driver(env, spec, agent)
    driver.reset(SEED)
    driver.collect(STEPS)
    env.close()

    seen = np.array([float(t["reward"][0]) for t in agent.transitions])
    assert len(seen) == STEPS
    assert set(seen.tolist()) <= {-1.0, 0.0, 1.0}
    assert (seen == 1.0).sum() >= 3  # several aliens hit

    # The unclipped twin: same seed, same actions, so the same game, frame by frame.
    twin, _ = make_vector_env(
        hp.env, 1, SEED, {**hp.env_kwargs, "clip_rewards": False}, hp.max_episode_steps
    )
    twin.reset(seed=SEED)
    raw = []
    game_scores = []
    for t in agent.transitions:
        obs, reward, terminated, truncated, info = twin.step(t["action"])
        np.testing.assert_array_equal(true_next_obs(obs, info), t["next_obs"])
        raw.append(float(reward[0]))
        final = info.get("final_info") or {}
        if "game_score" in final and final["_game_score"][0]:
            game_scores.append(float(final["game_score"][0]))
    twin.close()
    raw = np.array(raw)
    assert np.array_equal(np.sign(raw), seen), "clipping is sign() for these rewards"
    hits = raw[raw > 0]
    assert set(hits.tolist()) <= {5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 200.0}  # the game's values
    assert hits.max() > 1.0

    clipped_returns, _ = driver.stats.pop()  # per life (episodic life), clipped rewards
    scores = driver.stats.pop_game_scores()  # per game, raw
    assert len(scores) == 1 == len(game_scores)  # one game, ended by the 300-step cap
    # FireReset's two steps after a reset are counted in the raw score but not passed on; with
    # rewards of 5+ a hit there would show up as a raw score above the twin's reward sum.
    assert scores[0] == game_scores[0] >= raw.sum()
    assert sum(clipped_returns) == seen.sum() < raw.sum() <= scores[0]
    assert scores[0] > 5 * sum(clipped_returns) - 1e-9  # each hit is worth 5 points or more


def test_evaluation_reports_the_raw_game_score_above_the_clipped_return():
    hp = space_invaders_hparams()
    env, spec = make_eval_env(hp, 1, SEED)
    assert spec.reports_game_score
    result = evaluate(AlwaysFire(), env, SEED, epsilon=0.0, full_games=True)
    env.close()
    metrics = result.metrics()
    raw, clipped_per_life = result.raw_scores[0], result.episode_returns
    # The game's cap less FireReset's two steps at the start and, after each lost life,
    # EpisodicLife's NOOP and FireReset's two steps (wrapper steps the agent never takes).
    assert result.lengths[0] == STEPS - 2 - 3 * (len(clipped_per_life) - 1)
    assert set(np.unique(clipped_per_life)) - {0.0} and clipped_per_life.sum() >= 3
    assert raw >= 5 * clipped_per_life.sum()  # every clipped 1 was a hit worth 5 to 30
    assert raw == int(raw) and raw % 5 == 0
    assert metrics["eval/raw_score_mean"] == raw == metrics["eval/return_mean"]
    assert metrics["eval/raw_score_mean"] > metrics["eval/clipped_return_mean"] * len(
        clipped_per_life
    )
