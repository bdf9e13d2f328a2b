"""The clocks of a learner that gets no blocks from its actors (`ActorGroup.take`).

Ray restarts an actor whose node is lost on any node that can hold it, and keeps it waiting
while none can. When every such node is gone (a preempted actor node pool), the learner would
wait in silence and without end; so it says what it waits for every `report_every` seconds and,
once no live node could hold an actor for `timeout` seconds (--actor_wait_timeout), the run
checkpoints and exits with `ACTORS_UNAVAILABLE_EXIT` (docs/workers.md, "Faults and restarts").
Only the nodes count, not slow actors: an actor being built on a node that can hold it (a TF
import, seconds) never ends the run. No Ray here: the CLI reads the default without importing it.
"""

from __future__ import annotations

# The default --actor_wait_timeout: a lost GKE node is replaced in a few minutes (a new VM,
# then the image pulled), so 10 minutes without any node is capacity that is not coming back
# soon (e.g. no Spot VMs left), while the learner holds its accelerator idle.
DEFAULT_ACTOR_WAIT_SECONDS = 600.0
REPORT_SECONDS = 30.0  # the waiting line's interval (a shorter timeout's quarter)
POLL_SECONDS = 1.0  # how often a learner without blocks asks Ray for its nodes


def report_interval(timeout: float) -> float:
    """Seconds between waiting lines: 30, or a quarter of a shorter --actor_wait_timeout, so
    that a run says a few times what it waits for before that ends it (0: no timeout)."""
    return min(REPORT_SECONDS, timeout / 4) if timeout > 0 else REPORT_SECONDS


class NodeWait:
    """Since when the learner has had no block, and since when no live node could hold an
    actor; `now` is `time.monotonic()`, passed in so that the rule reads without a clock."""

    def __init__(self, timeout: float, now: float) -> None:
        self.timeout = timeout  # 0: wait without end
        self.report_every = report_interval(timeout)
        self.delivered(now)

    def delivered(self, now: float) -> None:
        """A block arrived: every clock starts again."""
        self.last_block = now
        self.no_node_since: float | None = None
        self.next_poll = now + POLL_SECONDS
        self.next_report = now + self.report_every

    def poll_due(self, now: float) -> bool:
        """Whether to ask Ray for its nodes now (at most every POLL_SECONDS without a block)."""
        return now >= self.next_poll

    def observe(self, now: float, nodes_that_fit: int) -> None:
        """Records how many live nodes could hold an actor now."""
        self.next_poll = now + POLL_SECONDS
        if nodes_that_fit:
            self.no_node_since = None
        elif self.no_node_since is None:
            self.no_node_since = now

    def without_block(self, now: float) -> float:
        return now - self.last_block

    def without_node(self, now: float) -> float:
        return 0.0 if self.no_node_since is None else now - self.no_node_since

    def expired(self, now: float) -> bool:
        """No node for the actors for `timeout` seconds: time to checkpoint and exit."""
        return (
            self.timeout > 0
            and self.no_node_since is not None
            and (now - self.no_node_since >= self.timeout)
        )

    def report_due(self, now: float) -> bool:
        """Whether to print the waiting line now; the next one is due `report_every` later."""
        if now < self.next_report:
            return False
        self.next_report = now + self.report_every
        return True
