"""Rendered/recorded episodes start recurrent agents from a zero state (`fresh_episode_policy`)."""

import numpy as np

from rl.evaluation import fresh_episode_policy


class RecordingAgent:
    def __init__(self) -> None:
        self.starts: list[list[bool]] = []

    def greedy_actions(self, obs: np.ndarray, episode_start: np.ndarray | None = None):
        self.starts.append(episode_start.tolist())
        return np.zeros(len(obs), np.int64)


def test_first_call_of_each_episode_says_the_episode_starts():
    agent = RecordingAgent()
    for _ in range(2):  # two episodes, one policy each (as the trainer builds them)
        policy = fresh_episode_policy(agent)
        for _ in range(3):
            assert policy(np.zeros([1, 4], np.float32)).tolist() == [0]
    assert agent.starts == [[True], [False], [False]] * 2
