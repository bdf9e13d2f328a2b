"""FrameReplay: one stored frame per step, stacks and n-step targets rebuilt exactly.

The oracle is `NStepAccumulator` fed the same full stacked transitions: every transition the
frame replay can draw must be one the accumulator emitted, bit for bit, across episode starts,
terminations, truncations, checkpoint cuts and ring wraparound.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from rl.memory import NStepAccumulator, UniformReplay
from rl.memory.frame_replay import FrameReplay
from rl.types import VectorStep

K = 4  # frames per stack
FRAME = (2, 3)
GAMMA = 0.9


def frame(env: int, episode: int, t: int) -> np.ndarray:
    """A frame that names its env copy, episode and step."""
    values = [env, episode, t % 256, t // 256, 7, 9]
    return np.array(values, np.uint8).reshape(FRAME)


class StackedStream:
    """Frame stacks as gymnasium's FrameStackObservation(padding_type="reset") makes them."""

    def __init__(self, env: int, lengths: list[int], truncate: set[int]) -> None:
        self.env, self.lengths, self.truncate = env, lengths, truncate
        self.episode, self.t = 0, 0
        self.frames = [frame(env, 0, 0)] * K

    def obs(self) -> np.ndarray:
        return np.stack(self.frames, -1)

    def step(self) -> tuple[np.ndarray, float, bool, bool]:
        """Advances one step; returns (true next obs, reward, terminated, truncated)."""
        self.t += 1
        self.frames = self.frames[1:] + [frame(self.env, self.episode, self.t)]
        next_obs = self.obs()
        reward = float(self.env * 100 + self.episode * 10 + self.t)
        ended = self.t >= self.lengths[self.episode % len(self.lengths)]
        truncated = ended and self.episode in self.truncate
        terminated = ended and not truncated
        if ended:
            self.restart()
        return next_obs, reward, terminated, truncated

    def restart(self) -> None:
        self.episode, self.t = self.episode + 1, 0
        self.frames = [frame(self.env, self.episode, 0)] * K


def feed(replay, oracle, streams, steps: int, cut_every: int | None = None) -> list[dict]:
    """Steps every stream, feeding both replays; returns the oracle's transitions."""
    emitted: list[dict] = []
    for i in range(steps):
        obs = np.stack([s.obs() for s in streams])
        action = np.array([(i * 3 + e) % 5 for e in range(len(streams))], np.int64)
        results = [s.step() for s in streams]
        next_obs = np.stack([r[0] for r in results])
        reward = np.array([r[1] for r in results], np.float32)
        terminated = np.array([r[2] for r in results])
        truncated = np.array([r[3] for r in results])
        replay.add(VectorStep(obs, action, reward, next_obs, terminated, truncated))
        out = oracle.add(VectorStep(obs, action, reward, next_obs, terminated, truncated))
        emitted += [{k: v[j] for k, v in out.items()} for j in range(len(out["reward"]))]
        if cut_every and (i + 1) % cut_every == 0:
            replay.end_all_episodes()
            out = oracle.flush()
            emitted += [{k: v[j] for k, v in out.items()} for j in range(len(out["reward"]))]
            for s in streams:
                s.restart()
    return emitted


def make(capacity: int, n_step: int, num_envs: int = 2, prioritized: bool = False, seed=0):
    replay = FrameReplay(
        capacity, (*FRAME, K), (), np.int64, num_envs, n_step, GAMMA, seed, prioritized
    )
    fields = {"obs": ((*FRAME, K), np.uint8), "action": ((), np.int64)}
    return replay, NStepAccumulator(n_step, GAMMA, num_envs, fields)


def key(obs: np.ndarray, action) -> bytes:
    return obs.tobytes() + np.int64(action).tobytes()


def check_samples(replay, emitted, draws: int) -> set[bytes]:
    truth = {key(t["obs"], t["action"]): t for t in emitted}
    batch = replay.sample(draws // 4, num_batches=4)
    assert batch["obs"].shape == (4, draws // 4, *FRAME, K) and batch["obs"].dtype == np.uint8
    seen = set()
    for b in range(4):
        for i in range(draws // 4):
            k = key(batch["obs"][b, i], batch["action"][b, i])
            assert k in truth, "sampled an obs stack no real step had"
            t = truth[k]
            np.testing.assert_array_equal(batch["next_obs"][b, i], t["next_obs"])
            assert batch["reward"][b, i] == pytest.approx(t["reward"], rel=1e-6)
            assert batch["discount"][b, i] == pytest.approx(t["discount"], rel=1e-6)
            seen.add(k)
    return seen


def test_memory_is_about_one_frame_per_transition():
    shape = (84, 84, 4)
    replay = FrameReplay(10_000, shape, (), np.int64, 2, 3, 0.99, 0)
    frame_bytes = 84 * 84
    per_row = replay.nbytes / replay.capacity
    # 1 frame + action (8) + reward (4) + 3 flags + 2 float64 sum-tree nodes per leaf (<= 64).
    assert frame_bytes < per_row < frame_bytes + 100, per_row
    plain = UniformReplay(1000, {"obs": (shape, np.uint8), "next_obs": (shape, np.uint8)}, seed=0)
    plain_bytes = plain.storage.nbytes / plain.capacity
    assert plain_bytes == 8 * frame_bytes  # what the frame replay avoids: 8 copies


@pytest.mark.parametrize("n_step", [1, 3])
@pytest.mark.parametrize("prioritized", [False, True])
def test_sampled_transitions_equal_the_true_ones(n_step, prioritized):
    replay, oracle = make(10_000, n_step, prioritized=prioritized)
    streams = [StackedStream(0, [5, 2, 7], {1}), StackedStream(1, [3, 9, 1], {0})]
    emitted = feed(replay, oracle, streams, steps=75, cut_every=25)
    # Every oracle transition is drawable (nothing lapped), and nothing else is.
    assert len(replay) == len(emitted)
    seen = check_samples(replay, emitted, draws=4000)
    assert seen == {key(t["obs"], t["action"]) for t in emitted}
    # The stacks really span episode starts: some sampled obs repeat their first frame.
    assert any(np.array_equal(t["obs"][..., 0], t["obs"][..., 1]) for t in emitted)


def test_wraparound_keeps_only_intact_transitions():
    n_step = 3
    replay, oracle = make(2 * 24, n_step)  # 24 rows per env copy
    streams = [StackedStream(0, [6, 11], {0}), StackedStream(1, [4, 13], set())]
    emitted = feed(replay, oracle, streams, steps=200, cut_every=70)
    assert 0 < len(replay) < 24
    check_samples(replay, emitted, draws=2000)


def test_pending_steps_are_not_drawn_until_their_window_is_complete():
    replay, oracle = make(1000, n_step=3, num_envs=1)
    streams = [StackedStream(0, [100], set())]
    feed(replay, oracle, streams, steps=3)
    assert len(replay) == 0  # obs_0's 3-step window needs obs_3, not written yet
    with pytest.raises(ValueError, match="no complete transition"):
        replay.sample(4)
    feed(replay, oracle, streams, steps=1)
    assert len(replay) == 1
    replay.end_all_episodes()  # a cut: the 3 pending steps bootstrap from the last next_obs
    assert len(replay) == 4


def test_state_dict_round_trip_continues_identically():
    replay, oracle = make(200, n_step=2, prioritized=True, seed=3)
    streams = [StackedStream(0, [5, 8], {1}), StackedStream(1, [6], set())]
    feed(replay, oracle, streams, steps=150)
    rows = replay.drawable_indices()[::7]
    replay.update_priorities(rows, np.linspace(0.1, 3.0, len(rows)))

    buffer = io.BytesIO()
    np.savez(buffer, **replay.state_dict())
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as saved:
        state = dict(saved)
    restored, _ = make(200, n_step=2, prioritized=True, seed=99)
    restored.load_state_dict(state)
    assert len(restored) == len(replay)

    for r in (replay, restored):  # the same cut and steps into both
        r.end_all_episodes()
        feed(r, make(200, 2)[1], [StackedStream(0, [5, 8], {1}), StackedStream(1, [6], set())], 9)
    a, b = replay.sample(8, 3, beta=0.5), restored.sample(8, 3, beta=0.5)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])

    other, _ = make(200, n_step=3, prioritized=True)
    with pytest.raises(ValueError, match="checkpoint frame replay"):
        other.load_state_dict(state)


def test_prioritized_draws_follow_priorities_and_weights_are_normalized():
    replay, oracle = make(1000, n_step=1, num_envs=1, prioritized=True, seed=1)
    emitted = feed(replay, oracle, [StackedStream(0, [1000], set())], steps=11)
    assert len(replay) == 10 == len(emitted) - 1  # the 11th step waits for its next obs
    rows = replay.drawable_indices()  # one env copy: slots K-1 .. K+8, steps 0..9
    assert list(rows) == list(range(K - 1, K + 9))
    favourite = K - 1 + 2  # step 2
    replay.update_priorities(rows, np.where(rows == favourite, 9.0, 1.0))
    draws = replay.sample(1000, 4, beta=1.0)
    share = np.mean(draws["indices"] == favourite)
    # p = (|delta| + eps)^0.6: 9^0.6 = 3.74 against 1 for 9 others -> 3.74 / 12.74 = 0.29.
    assert share == pytest.approx(9**0.6 / (9**0.6 + 9), abs=0.03)
    weights = draws["weights"]
    assert np.allclose(weights.max(axis=1), 1.0)
    # (p_i / p_min)^-beta with beta = 1: the favourite's weight is 1 / 9^0.6 in every batch.
    assert np.allclose(weights[draws["indices"] == favourite], 9**-0.6, rtol=1e-4)


def test_rejects_observations_that_are_not_a_frame_stack():
    replay, _ = make(100, n_step=1, num_envs=1)
    obs = np.zeros((1, *FRAME, K), np.uint8)
    next_obs = obs.copy()
    next_obs[..., 1] = 5  # not obs shifted by one frame
    with pytest.raises(ValueError, match="not a frame stack"):
        replay.add(VectorStep(obs, [0], [0.0], next_obs, [False], [False]))
