"""Evaluation on a separate vector env with its own seeds (`eval` hparams,
docs/evaluation_protocol.md). Each env copy plays exactly one episode, so short episodes are not
over-represented; where the env reports full games (Atari) that is a whole game.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import tensorflow as tf

from rl.agents.base import Agent
from rl.envs import make_vector_env
from rl.envs.atari import DEFAULT_STICKY, check_sticky_actions
from rl.envs.spec import EnvSpec
from rl.hparams import HParams
from rl.hparams.common import check_evaluation_protocol


@dataclass(frozen=True)
class EvalResult:
    """One evaluation; `returns` are raw full-game scores where the env reports games."""

    returns: np.ndarray
    lengths: np.ndarray
    # Atari only: raw full-game scores (== returns) and the learned-from reward sum of each life.
    raw_scores: np.ndarray | None = None
    episode_returns: np.ndarray | None = None
    # With a step budget (`eval.step_budget`): episodes cut unfinished when it ran out.
    truncated_episodes: int | None = None
    # Goal-conditioned envs (info["is_success"] at an episode's last step): 1.0/0.0 per episode.
    successes: np.ndarray | None = None

    @property
    def return_mean(self) -> float:
        return float(np.mean(self.returns))

    @property
    def return_std(self) -> float:
        return float(np.std(self.returns))

    def metrics(self, section: str = "eval") -> dict[str, float]:
        metrics = {
            f"{section}/return_mean": self.return_mean,
            f"{section}/return_std": self.return_std,
            f"{section}/length_mean": float(np.mean(self.lengths)),
            f"{section}/episodes": float(len(self.returns)),
        }
        if self.raw_scores is not None:
            metrics[f"{section}/raw_score_mean"] = float(np.mean(self.raw_scores))
            metrics[f"{section}/raw_score_std"] = float(np.std(self.raw_scores))
        if self.episode_returns is not None and len(self.episode_returns):
            metrics[f"{section}/clipped_return_mean"] = float(np.mean(self.episode_returns))
        if self.truncated_episodes is not None:
            metrics[f"{section}/truncated_episodes"] = float(self.truncated_episodes)
        if self.successes is not None and len(self.successes):
            metrics[f"{section}/success_rate"] = float(np.mean(self.successes))
        return metrics


def eval_env_kwargs(hparams: HParams) -> dict:
    """The env_kwargs evaluation plays with: the training ones with `eval.env_kwargs` on top."""
    return {**hparams.env_kwargs, **hparams.eval.env_kwargs}


def make_eval_env(
    hparams: HParams, num_envs: int, seed: int
) -> tuple[gym.vector.VectorEnv, EnvSpec]:
    """The env the evaluation protocol describes (no reward augmentation, ever)."""
    protocol = hparams.eval
    check_evaluation_protocol(protocol, hparams.env)
    check_sticky_actions(hparams.env, protocol.sticky_actions)
    env_kwargs = eval_env_kwargs(hparams)
    if protocol.sticky_actions is not None:
        train_p = float(env_kwargs.get("repeat_action_probability", DEFAULT_STICKY))
        env_kwargs["repeat_action_probability"] = (
            (train_p if train_p > 0 else DEFAULT_STICKY) if protocol.sticky_actions else 0.0
        )
    limit = protocol.max_episode_steps
    if limit is None:
        limit = hparams.max_episode_steps
    return make_vector_env(
        hparams.env, num_envs, seed, env_kwargs=env_kwargs, max_episode_steps=limit
    )


def evaluate(
    agent: Agent,
    env: gym.vector.VectorEnv,
    seed: int,
    epsilon: float = 0.0,
    full_games: bool = False,
    step_budget: int | None = None,
    sample_actions: bool | None = None,
) -> EvalResult:
    """Plays one episode (one full game if `full_games`) in each copy of `env`. `step_budget`
    (env steps of all copies) keeps a policy that stalls a game (never pressing FIRE) from holding
    training up; cut episodes count with their score so far. Randomness (`sample_actions`,
    `epsilon`) comes from `seed`, never the agent's training generator."""
    num_envs = env.num_envs
    obs, _ = env.reset(seed=seed)
    rng = np.random.Generator(np.random.PCG64(seed))
    if sample_actions is None:
        sample_actions = declares_sampling(agent)
    sampled_actions = SampledActions(agent, num_envs, rng) if sample_actions else None
    returns = np.zeros(num_envs, np.float64)  # rewards the agent sees, whole evaluation episode
    lengths = np.zeros(num_envs, np.int64)
    raw_scores = np.zeros(num_envs, np.float64)
    life_returns = np.zeros(num_envs, np.float64)
    episode_returns: list[float] = []
    successes: dict[int, float] = {}  # env copy -> its episode's final info["is_success"]
    running = np.ones(num_envs, bool)
    # Stand-ins for agents in tests may lack the attribute: they are feed-forward.
    recurrent = getattr(agent, "recurrent", False)
    episode_start = np.ones(num_envs, bool)
    while running.any():
        action = _policy_actions(agent, obs, episode_start, sampled_actions, recurrent)
        action = _epsilon_random(action, epsilon, rng, env.single_action_space)
        obs, reward, terminated, truncated, info = env.step(action)
        returns += np.where(running, reward, 0.0)
        life_returns += np.where(running, reward, 0.0)
        lengths += running
        ended = terminated | truncated
        episode_start = ended  # a recurrent state restarts at every env episode (lost life)
        final = info.get("final_info") or {}
        successes.update(_successes(final, ended & running))
        for i in np.flatnonzero(ended & running):
            episode_returns.append(float(life_returns[i]))
            life_returns[i] = 0.0
        if full_games:
            game_over = np.asarray(final.get("_game_score", np.zeros(num_envs, bool)), bool)
            if game_over.any():
                raw_scores = np.where(game_over & running, final["game_score"], raw_scores)
            running &= ~game_over
        else:
            running &= ~ended
        if step_budget is not None and running.any() and lengths.sum() >= step_budget:
            break
    truncated = None if step_budget is None else int(running.sum())
    if truncated:
        raw_scores = _scores_of_cut_episodes(env, running, raw_scores, full_games, step_budget)
    if not full_games:
        reported = np.array([successes[i] for i in sorted(successes)]) if successes else None
        return EvalResult(returns, lengths, truncated_episodes=truncated, successes=reported)
    life_sums = np.asarray(episode_returns)
    return EvalResult(raw_scores, lengths, raw_scores, life_sums, truncated_episodes=truncated)


def _policy_actions(
    agent: Agent,
    obs: np.ndarray,
    episode_start: np.ndarray,
    sampled_actions: SampledActions | None,
    recurrent: bool,
) -> np.ndarray:
    """The evaluated policy's actions: sampled from its distribution, or its greedy ones (a
    recurrent policy's with the copies whose episode starts, to reset their state)."""
    if sampled_actions is not None:
        return sampled_actions(obs, episode_start)
    if recurrent:
        return agent.greedy_actions(obs, episode_start)
    return agent.greedy_actions(obs)


def _epsilon_random(
    action: np.ndarray, epsilon: float, rng: np.random.Generator, space: gym.Space
) -> np.ndarray:
    """`action` with each copy's replaced by a uniformly random one with probability `epsilon`
    (no draw from `rng` when it is 0)."""
    if epsilon <= 0:
        return action
    num_envs = len(action)
    explore = rng.random(num_envs) < epsilon
    explore = explore.reshape(explore.shape + (1,) * (np.ndim(action) - 1))  # [N, 1, ...]
    return np.where(explore, _random_actions(rng, space, num_envs), action)


def _successes(final: dict, ended: np.ndarray) -> dict[int, float]:
    """Env copy -> final info["is_success"] of the `ended` episodes that report one (a vector
    env's info holds each key's values, and "_key" flags of the copies that set it)."""
    reports = np.asarray(final.get("_is_success", np.zeros(len(ended), bool)), bool)
    return {int(i): float(final["is_success"][i]) for i in np.flatnonzero(ended & reports)}


def _scores_of_cut_episodes(
    env: gym.vector.VectorEnv,
    running: np.ndarray,
    raw_scores: np.ndarray,
    full_games: bool,
    step_budget: int,
) -> np.ndarray:
    """Says that `step_budget` cut the `running` episodes; with `full_games`, their raw game
    scores so far replace `raw_scores` (their returns so far already count)."""
    if full_games:
        so_far = np.asarray(env.get_attr("score_so_far"), np.float64)
        raw_scores = np.where(running, so_far, raw_scores)
    print(
        f"evaluation cut at eval.step_budget={step_budget:,} env steps: {int(running.sum())} of "
        f"{env.num_envs} episodes unfinished, counted with their score so far"
    )
    return raw_scores


def declares_sampling(agent: Agent) -> bool:
    """`eval.sample_actions` (stand-ins for agents in tests have no hparams: greedy)."""
    hparams = getattr(agent, "hparams", None)
    return hparams is not None and hparams.eval.sample_actions


class SampledActions:
    """`agent.greedy_actions`, sampled (`Agent.sampled_policy_step`) with randomness from `rng`."""

    def __init__(self, agent: Agent, num_envs: int, rng: np.random.Generator) -> None:
        self._step = tf.function(agent.sampled_policy_step, autograph=False)
        self._state = np.zeros([num_envs, agent.policy_state_size], np.float32)
        self._rng = rng

    def __call__(self, obs: np.ndarray, episode_start: np.ndarray) -> np.ndarray:
        self._state[episode_start] = 0.0
        seed = tf.constant(self._rng.integers(2**63 - 1), tf.int64)
        action, state = self._step(obs, self._state, seed)
        self._state = np.array(state)
        return action.numpy()


def _random_actions(rng: np.random.Generator, space: gym.Space, num_envs: int) -> np.ndarray:
    if isinstance(space, gym.spaces.Discrete):
        return space.start + rng.integers(0, space.n, size=num_envs)
    low, high = np.broadcast_arrays(space.low, space.high)
    return rng.uniform(low, high, size=(num_envs, *space.shape)).astype(space.dtype)


def write_protocol_summary(writer: tf.summary.SummaryWriter, hparams: HParams) -> None:
    """The evaluation protocol as a TensorBoard text summary (tab TEXT, tag protocol)."""
    protocol = {
        **hparams.eval.to_dict(),
        "env": hparams.env,
        "env_kwargs": eval_env_kwargs(hparams),
    }
    text = json.dumps(protocol, indent=2, sort_keys=True, default=str)
    with writer.as_default(step=0):
        tf.summary.text("protocol", f"```\n{text}\n```")
    writer.flush()


def fresh_episode_policy(agent: Agent, seed: int = 0) -> Callable[[np.ndarray], np.ndarray]:
    """The policy for ONE new episode of one env (video): a recurrent agent starts it from zero."""
    first = [True]
    sampled_actions = None
    if declares_sampling(agent):
        sampled_actions = SampledActions(agent, 1, np.random.Generator(np.random.PCG64(seed)))

    def policy(obs: np.ndarray) -> np.ndarray:
        start = np.array([first[0]])
        first[0] = False
        if sampled_actions is not None:
            return sampled_actions(obs, start)
        return agent.greedy_actions(obs, start)

    return policy
