"""HindsightReplay: relabelled goals come from the transition's own episode, as the strategy says;
rewards come from the env's function; withdrawn, running and overwritten episodes are never
drawn; a checkpoint resumes the same draws.

Observations name their env copy, episode and step, so each drawn item can be traced back: the
packed vector is [env, episode, t, achieved (2), desired (2)], where the achieved goal after step
t is (code, -code) with code = 1000 env + 100 episode + t, and the desired goal is (-1, -episode).
"""

from __future__ import annotations

import numpy as np
import pytest

from rl.memory.hindsight import HindsightReplay
from rl.types import VectorStep

ACHIEVED, DESIRED = slice(3, 5), slice(5, 7)
GAMMA = 0.9


def code(env: int, episode: int, t: int) -> float:
    return 1000.0 * env + 100.0 * episode + t


def observation(env: int, episode: int, t: int) -> np.ndarray:
    c = code(env, episode, t)
    return np.array([env, episode, t, c, -c, -1.0, -episode], np.float32)


def reward_of(achieved: np.ndarray, desired: np.ndarray) -> np.ndarray:
    """0 where the goal is reached, else -1 (as a sparse goal env)."""
    return np.all(achieved == desired, axis=-1).astype(np.float32) - 1.0


class Streams:
    """`num_envs` env copies, each with its own episode lengths (cycled), stepped together."""

    def __init__(self, lengths: list[list[int]]) -> None:
        self.lengths = lengths
        self.episode = [0] * len(lengths)
        self.t = [0] * len(lengths)

    def step(self) -> tuple[np.ndarray, ...]:
        obs, next_obs, ended = [], [], []
        for e, lengths in enumerate(self.lengths):
            episode, t = self.episode[e], self.t[e]
            obs.append(observation(e, episode, t))
            next_obs.append(observation(e, episode, t + 1))
            done = t + 1 >= lengths[episode % len(lengths)]
            ended.append(done)
            self.episode[e], self.t[e] = (episode + 1, 0) if done else (episode, t + 1)
        obs, next_obs = np.stack(obs), np.stack(next_obs)
        action = obs[:, 2].astype(np.int64)
        reward = reward_of(next_obs[:, ACHIEVED], next_obs[:, DESIRED])
        terminated = np.zeros(len(ended), bool)
        return obs, action, reward, next_obs, terminated, np.array(ended)


def make(capacity=200, num_envs=2, strategy="future", n_sampled_goal=4, seed=0):
    return HindsightReplay(
        capacity, (7,), np.float32, (), np.int64, num_envs, ACHIEVED, DESIRED, reward_of,
        strategy=strategy, n_sampled_goal=n_sampled_goal, gamma=GAMMA, seed=seed,
    )  # fmt: skip


def fill(replay, streams, steps):
    for _ in range(steps):
        replay.add(VectorStep(*streams.step()))


def relabelled_step(item_obs: np.ndarray) -> int:
    """The step t' whose achieved goal an item's desired goal now is (code's last two digits)."""
    return int(round(item_obs[5])) % 100


@pytest.mark.parametrize("strategy", ["future", "final", "episode"])
def test_relabelled_goals_come_from_the_items_own_episode_as_the_strategy_says(strategy):
    replay = make(strategy=strategy)
    streams = Streams([[5, 3], [4]])
    fill(replay, streams, 40)
    batch = replay.sample(batch_size=20, num_batches=50)
    relabelled = replay.relabelled_per_batch(20)
    assert relabelled == 16  # int(0.8 * 20), SB3's her_ratio at n_sampled_goal=4
    lengths = {(0, 0): 5, (0, 1): 3, (1, 0): 4}
    seen_steps = set()
    for k in range(50):
        for b in range(20):
            obs, next_obs = batch["obs"][k, b], batch["next_obs"][k, b]
            env, episode, t = (int(v) for v in obs[:3])
            assert next_obs[2] == t + 1 and next_obs[1] == episode and next_obs[0] == env
            assert batch["action"][k, b] == t
            np.testing.assert_array_equal(obs[DESIRED], next_obs[DESIRED])
            if b >= relabelled:  # a real transition, untouched
                np.testing.assert_array_equal(obs, observation(env, episode, t))
                assert batch["reward"][k, b] == reward_of(next_obs[ACHIEVED], next_obs[DESIRED])
                continue
            goal = obs[DESIRED]
            goal_episode = (int(round(goal[0])) - 1000 * env) // 100
            assert goal_episode == episode, "a goal from another episode or env copy"
            np.testing.assert_array_equal(goal, [goal[0], -goal[0]])
            step = relabelled_step(obs)  # the goal reached after step `step` (1-based)
            length = lengths[(env, episode % 2 if env == 0 else 0)]
            if strategy == "final":
                assert step == length
            elif strategy == "future":
                assert t + 1 <= step <= length
            else:
                assert 1 <= step <= length
            seen_steps.add((t, step))
            assert batch["reward"][k, b] == (0.0 if step == t + 1 else -1.0)
    assert batch["discount"].dtype == np.float32 and np.all(batch["discount"] == np.float32(GAMMA))
    if strategy == "future":  # every later step of an episode is drawn, never an earlier one
        assert {(0, s) for s in range(1, 6)} <= seen_steps
    if strategy == "episode":  # earlier steps too
        assert any(step < t + 1 for t, step in seen_steps)


def test_only_finished_episodes_are_drawn_and_end_all_episodes_finishes_the_running_ones():
    replay = make(n_sampled_goal=0)
    streams = Streams([[6], [100]])
    fill(replay, streams, 9)  # env 0: one finished episode (6 steps) + 3 running; env 1 running
    assert len(replay) == 6
    batch = replay.sample(batch_size=64, num_batches=4)
    assert set(batch["obs"][..., 0].ravel()) == {0.0}
    assert set(batch["obs"][..., 1].ravel()) == {0.0}
    replay.end_all_episodes()
    assert len(replay) == 18
    batch = replay.sample(batch_size=64, num_batches=8)
    assert set(batch["obs"][..., 0].ravel()) == {0.0, 1.0}
    with pytest.raises(ValueError, match="no finished episode"):
        make().sample(4)


def test_an_episode_partly_overwritten_by_the_ring_is_withdrawn_whole():
    rows_per_env = 10
    replay = make(capacity=2 * rows_per_env, num_envs=2)
    lengths = {0: 4, 1: 7}
    streams = Streams([[lengths[0]], [lengths[1]]])
    for written in range(1, 41):
        replay.add(VectorStep(*streams.step()))
        oldest = written - rows_per_env  # the oldest absolute row still in the ring
        # Drawable: every finished episode whose first row is still in the ring.
        expected = sum(
            length
            for env, length in lengths.items()
            for episode in range(written // length)
            if episode * length >= oldest
        )
        assert len(replay) == expected, written
        if not expected:
            continue
        batch = replay.sample(batch_size=32, num_batches=4)
        for obs in batch["obs"].reshape(-1, 7):
            env, episode = int(obs[0]), int(obs[1])
            assert episode * lengths[env] >= oldest, (written, env, episode)


def test_an_episode_longer_than_the_ring_is_refused_with_the_fix():
    replay = make(capacity=10, num_envs=2)  # 5 rows per env copy
    streams = Streams([[50], [3]])
    with pytest.raises(ValueError, match="raise buffer_size to at least 12"):
        fill(replay, streams, 6)


def test_a_restored_replay_draws_what_the_uninterrupted_one_draws():
    straight, restored = make(capacity=40, seed=3), make(capacity=40, seed=3)
    streams_a, streams_b = Streams([[5, 3], [4]]), Streams([[5, 3], [4]])
    fill(straight, streams_a, 27)
    fill(restored, streams_b, 27)
    straight.sample(8, 3)
    restored.sample(8, 3)
    state = {k: np.array(v) for k, v in restored.state_dict().items()}  # copies, as on disk
    restored = make(capacity=40, seed=99)
    restored.load_state_dict(state)
    for _ in range(3):  # past the ring's wrap
        fill(straight, streams_a, 11)
        fill(restored, streams_b, 11)
        a, b = straight.sample(16, 4), restored.sample(16, 4)
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    other = make(capacity=40, strategy="final")
    with pytest.raises(ValueError, match="checkpoint HER replay is"):
        other.load_state_dict(state)
