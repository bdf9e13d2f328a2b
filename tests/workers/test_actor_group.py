"""The learner's side of the actors (rl/workers/actor_group.py) on an embedded Ray runtime, with
a scripted actor that needs no TensorFlow: weights with each call (loaded once per version, large
ones through the object store), backpressure, and restarts: an actor whose call raised or whose
process died comes back and is counted; one failure more than `max_restarts` is one WorkerError
line."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from rl.errors import WorkerError
from rl.workers.actor_group import INLINE_WEIGHTS_BYTES, ActorGroup
from tests.workers.scripted_actor import ScriptedActor

pytestmark = pytest.mark.e2e  # Ray's processes, actor processes that die


def _group(tmp_path, scripts: list[dict], max_restarts: int, depth: int = 2) -> ActorGroup:
    group = ActorGroup(
        ScriptedActor,
        len(scripts),
        json.dumps({str(i): script for i, script in enumerate(scripts)}),
        seeds=[(i, i) for i in range(len(scripts))],
        depth=depth,
        max_restarts=max_restarts,
        traceback_dir=str(tmp_path / "workers"),
    )
    group.publish([np.arange(3.0)], env_steps=7)
    group.start()
    return group


def _take_until(group: ActorGroup, done, timeout: float = 120.0) -> list[dict]:
    blocks, deadline = [], time.monotonic() + timeout
    while not done(blocks):
        assert time.monotonic() < deadline, f"not done in {timeout} s ({len(blocks)} blocks)"
        blocks += group.take(4, timeout=1.0)
    return blocks


def test_weights_blocks_and_restarts(tmp_path, capsys):
    group = _group(tmp_path, [{"raise_on_call": 2}, {"exit_on_call": 3}], max_restarts=1)
    try:
        (first,) = _take_until(group, lambda blocks: blocks)[:1]
        np.testing.assert_array_equal(first["weights"], [[0.0, 1.0, 2.0]])
        assert (first["version"], first["learner_steps"], first["restarted"]) == (1, 7, False)
        assert first["node_id"] == group.node_id  # one node: the learner's
        group.publish([np.arange(3.0) * 2], env_steps=99)

        # Actor 0's 2nd call raises (it is killed and restarted), actor 1's 3rd ends its process
        # (Ray restarts it): both come back and deliver with the new weights.
        def restarted_with_new_weights(blocks: list[dict]) -> bool:
            return {(b["worker"], b["restarted"], b["version"]) for b in blocks} >= {
                (0, True, 2),
                (1, True, 2),
            }

        later = _take_until(group, restarted_with_new_weights)
        assert group.count_restarts() == 2 and group.restarts == 2
        for block in later:
            expected = [[0.0, 2.0, 4.0]] if block["version"] == 2 else [[0.0, 1.0, 2.0]]
            np.testing.assert_array_equal(block["weights"], expected)
            assert block["learner_steps"] == (99 if block["version"] == 2 else 7)
        # Each process fetched each version's weights once, whatever the number of calls.
        assert all(b["fetches"] <= b["version"] for b in later)
        out = capsys.readouterr().out
        assert "worker 0 failed: ValueError: scripted failure of actor 0 (traceback: " in out
        assert "; restarting it" in out
        for index in (0, 1):  # where each actor's first and second process ran
            assert out.count(f"actor {index} runs on node {group.node_id} (pid ") == 2, out
        trace = (tmp_path / "workers" / "worker_0_traceback.txt").read_text()
        assert "scripted failure of actor 0" in trace and "scripted_actor.py" in trace
        # Backpressure: with nothing taken, each actor finishes at most `depth` calls.
        time.sleep(3.0)
        assert group.queued_blocks() <= 2 * 2
        # Weights over INLINE_WEIGHTS_BYTES go through the object store: the same arrays arrive.
        large = [np.arange(INLINE_WEIGHTS_BYTES / 8 + 1), np.ones((2, 3), np.float32)]
        group.publish(large, env_steps=123)
        newest = _take_until(
            group, lambda blocks: {(b["worker"], b["version"]) for b in blocks} >= {(0, 3), (1, 3)}
        )
        for block in (b for b in newest if b["version"] == 3):
            for got, expected in zip(block["weights"], large, strict=True):
                np.testing.assert_array_equal(got, expected)
            assert (block["learner_steps"], block["by_reference"]) == (123, True)
        assert not first["by_reference"]  # small ones come inside the call
    finally:
        group.stop()
    group.stop()  # again: nothing left to stop


def test_one_failure_more_than_max_restarts_is_a_worker_error(tmp_path):
    group = _group(tmp_path, [{}, {"raise_on_call": 1}], max_restarts=0)
    try:
        with pytest.raises(WorkerError) as raised:
            _take_until(group, lambda blocks: False)
    finally:
        group.stop()
    assert str(raised.value).startswith(
        "worker 1 failed: ValueError: scripted failure of actor 1 (traceback: "
    )
    assert str(raised.value).endswith("; no restart left (--max_actor_restarts 0)")
