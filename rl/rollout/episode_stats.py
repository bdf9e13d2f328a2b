"""Episode bookkeeping of a Python vector-env loop: finished episodes' returns and lengths, and
the true next observation where gymnasium's SAME_STEP autoreset already began the next episode.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class EpisodeStats:
    """Returns and lengths of episodes that finished since the last `pop`, and the running
    return and length of every env's current episode, which `add_step` adds up."""

    num_envs: int
    returns: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    # Raw full-game scores (Atari's info["game_score"]); games can span several episodes.
    game_scores: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._return = np.zeros(self.num_envs, np.float64)
        self._length = np.zeros(self.num_envs, np.int64)

    def restart(self) -> None:
        """Every env begins a fresh episode (the envs were reset)."""
        self._return[:] = 0.0
        self._length[:] = 0

    def add_step(self, reward: np.ndarray, done: np.ndarray) -> None:
        """Adds one vector step's rewards; the `done` episodes are recorded and begin again."""
        self._return += reward
        self._length += 1
        for i in np.flatnonzero(done):
            self.returns.append(float(self._return[i]))
            self.lengths.append(int(self._length[i]))
            self._return[i] = 0.0
            self._length[i] = 0

    def state_dict(self) -> dict[str, np.ndarray]:
        """The running episodes and what is not popped yet (a mid-episode checkpoint)."""
        return {
            "running_return": self._return.copy(),
            "running_length": self._length.copy(),
            "returns": np.asarray(self.returns, np.float64),
            "lengths": np.asarray(self.lengths, np.int64),
            "game_scores": np.asarray(self.game_scores, np.float64),
        }

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        self._return[:] = state["running_return"]
        self._length[:] = state["running_length"]
        self.returns = [float(x) for x in state["returns"]]
        self.lengths = [int(x) for x in state["lengths"]]
        self.game_scores = [float(x) for x in state["game_scores"]]

    def pop(self) -> tuple[list[float], list[int]]:
        out = (self.returns, self.lengths)
        self.returns, self.lengths = [], []
        return out

    def pop_game_scores(self) -> list[float]:
        out, self.game_scores = self.game_scores, []
        return out


def true_next_obs(next_obs: np.ndarray, info: dict) -> np.ndarray:
    """The real next observation per env: SAME_STEP autoreset returns the reset observation for
    finished envs and keeps the last one in info["final_obs"]."""
    mask = info.get("_final_obs")
    if mask is None or not mask.any():
        return next_obs
    result = next_obs.copy()
    for i in np.flatnonzero(mask):
        result[i] = info["final_obs"][i]
    return result
