"""The rule that ends a learner's wait for actors no node can hold (rl/workers/waiting.py), on
a clock passed in: only time without a node counts, a node or a block starts it again, the
waiting line comes at a steady interval, and 0 waits without end. (On a Ray cluster:
tests/workers/test_ray_cluster.py.)"""

from __future__ import annotations

from rl.workers.waiting import DEFAULT_ACTOR_WAIT_SECONDS, NodeWait, report_interval


def test_the_wait_ends_after_the_timeout_without_a_node():
    wait = NodeWait(timeout=10.0, now=0.0)
    wait.observe(5.0, nodes_that_fit=2)  # actors still being built: no clock
    assert not wait.expired(100.0)
    wait.observe(20.0, nodes_that_fit=0)  # every actor node gone from here on
    assert wait.without_node(29.5) == 9.5 and not wait.expired(29.9)
    assert wait.expired(30.0)


def test_a_node_or_a_block_starts_the_clock_again():
    wait = NodeWait(timeout=10.0, now=0.0)
    wait.observe(1.0, nodes_that_fit=0)
    wait.observe(8.0, nodes_that_fit=1)  # a node came back before the timeout
    wait.observe(9.0, nodes_that_fit=0)
    assert not wait.expired(18.0) and wait.expired(19.0)
    wait.delivered(19.5)  # a block arrived
    assert not wait.expired(100.0)
    assert wait.without_block(21.5) == 2.0


def test_no_timeout_waits_without_end():
    wait = NodeWait(timeout=0.0, now=0.0)
    wait.observe(1.0, nodes_that_fit=0)
    assert not wait.expired(1e9)
    assert wait.report_every == 30.0


def test_the_waiting_line_comes_at_a_steady_interval():
    assert report_interval(DEFAULT_ACTOR_WAIT_SECONDS) == 30.0
    assert report_interval(8.0) == 2.0  # a quarter of a short timeout: said several times
    wait = NodeWait(timeout=8.0, now=0.0)
    due = [t / 2 for t in range(21) if wait.report_due(t / 2)]  # asked every 0.5 s for 10 s
    assert due == [2.0, 4.0, 6.0, 8.0, 10.0]
    wait.delivered(10.2)
    assert not wait.report_due(12.0) and wait.report_due(12.2)
