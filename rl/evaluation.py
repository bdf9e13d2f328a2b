"""Greedy evaluation on a separate vector env with its own seeds.

Each of the env copies plays exactly one episode (num_envs == episodes), so short episodes are
not over-represented and the whole evaluation costs one compiled call per vector step.
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from rl.agents.base import Agent


@dataclass(frozen=True)
class EvalResult:
    returns: np.ndarray
    lengths: np.ndarray

    @property
    def return_mean(self) -> float:
        return float(np.mean(self.returns))

    @property
    def return_std(self) -> float:
        return float(np.std(self.returns))

    def metrics(self, section: str = "eval") -> dict[str, float]:
        return {
            f"{section}/return_mean": self.return_mean,
            f"{section}/return_std": self.return_std,
            f"{section}/length_mean": float(np.mean(self.lengths)),
            f"{section}/episodes": float(len(self.returns)),
        }


def evaluate(agent: Agent, env: gym.vector.VectorEnv, seed: int) -> EvalResult:
    """Plays one greedy episode in each copy of `env`; returns per-episode returns/lengths."""
    num_envs = env.num_envs
    obs, _ = env.reset(seed=seed)
    returns = np.zeros(num_envs, np.float64)
    lengths = np.zeros(num_envs, np.int64)
    running = np.ones(num_envs, bool)
    while running.any():
        action = agent.greedy_actions(obs)
        obs, reward, terminated, truncated, _ = env.step(action)
        returns += np.where(running, reward, 0.0)
        lengths += running
        running &= ~(terminated | truncated)
    return EvalResult(returns=returns, lengths=lengths)
