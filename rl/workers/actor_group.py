"""The learner's handle on its Ray actors (https://docs.ray.io).

- Ray: a small runtime started here (no dashboard, actors at the learner's niceness) or the
  cluster at --ray_address; `resources` (--actor_resources) pick the nodes actors land on.
- Weights: each call carries the newest published weights and their version, loaded only if
  newer (asking for them per block cost IMPALA's small blocks nearly half their rate).
- Blocks: each actor has `depth` calls in flight (backpressure, as a bounded queue gives).
- Faults: a call that raises has its actor's process replaced (traceback in a file); Ray
  restarts a dead actor up to `max_restarts` times, then the run ends with one WorkerError line.
- No node: without blocks the learner says what it waits for at a steady interval, and
  `ActorsUnavailable` ends the run once no live node could hold an actor for `wait_timeout`
  seconds (rl/workers/waiting.py): Ray would keep such actors waiting for a node forever.
- Signals are this process's (rl/preemption.py): `ray.init`'s SIGTERM handler is undone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import threading
import time
from typing import Any

import numpy as np
import ray
from ray.exceptions import RayActorError, RayTaskError

from rl.errors import ACTORS_UNAVAILABLE_EXIT, ActorsUnavailable, WorkerError
from rl.utils import private_apis
from rl.utils.files import join
from rl.utils.processes import children_ignore_stop_signals
from rl.workers.waiting import DEFAULT_ACTOR_WAIT_SECONDS, NodeWait

OBJECT_STORE_BYTES = 256 * 2**20  # a local runtime's: weights and blocks in flight (Ray spills)
# Weights up to this size go inside each call. Ray would put a larger argument into the object
# store on every call, so those are put there once per publication (Ray's advice:
# https://docs.ray.io/en/latest/ray-core/patterns/pass-large-arg-by-value.html).
INLINE_WEIGHTS_BYTES = 100 * 2**10
# Where `rl` is imported from here: an embedded runtime's workers import the same code.
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ActorGroup:
    """`num_actors` Ray actors of `actor_class` (rl/workers/actor.py) feeding this learner."""

    def __init__(
        self,
        actor_class: type,
        num_actors: int,
        hparams_json: str,
        seeds: list[tuple[int, int]],  # actor i's (env, agent) seeds
        depth: int,
        max_restarts: int,
        address: str | None = None,
        resources: dict[str, float] | None = None,
        traceback_dir: str = ".",
        label: str = "run",
        wait_timeout: float = DEFAULT_ACTOR_WAIT_SECONDS,
    ) -> None:
        """`wait_timeout`: seconds without a live node that could hold an actor before `take`
        raises `ActorsUnavailable` (0: never)."""
        self.label, self.traceback_dir = label, traceback_dir
        self.depth, self.max_restarts = depth, max_restarts
        self.restarts = 0  # Ray's count, over every actor (`count_restarts`)
        self.version = 0  # weights publications
        self._weights: tuple[list, int, int] = ([], 0, 0)  # (weights, version, env steps)
        self._calls: dict[ray.ObjectRef, int] = {}  # call -> actor index
        self._processes: list[tuple[str, int] | None] = [None] * num_actors  # (node id, pid)
        self._failures: dict[int, str] = {}  # actor -> its last failure's line and traceback
        self._replacing = [False] * num_actors  # until a new process of a failed one delivers
        # What each actor asks a node for (`_nodes_that_fit`), and the clocks of a learner
        # without blocks (rl/workers/waiting.py).
        self.need: dict[str, float] = {"CPU": 1, **(resources or {})}
        self.wait = NodeWait(wait_timeout, time.monotonic())
        _start_ray(address, num_actors)
        self.node_id = ray.get_runtime_context().get_node_id()
        remote = ray.remote(actor_class).options(
            num_cpus=1,
            resources=resources or None,
            max_restarts=max_restarts,
            scheduling_strategy="SPREAD",
        )
        self.handles = [
            remote.remote(i, num_actors, hparams_json, seeds[i]) for i in range(num_actors)
        ]
        where = f"the Ray cluster at {address}" if address else "a Ray runtime started here"
        print(f"[{label}] {num_actors} Ray actors on {where}; this learner on node {self.node_id}")

    def publish(self, arrays: list[np.ndarray], env_steps: int) -> None:
        """New weights (and the learner's env step count) for every call from now on."""
        self.version += 1
        small = sum(array.nbytes for array in arrays) <= INLINE_WEIGHTS_BYTES
        self._weights = ([arrays if small else ray.put(arrays)], self.version, int(env_steps))

    def start(self) -> None:
        """Submits every actor's first calls (after the first `publish`)."""
        for index in range(len(self.handles)):
            for _ in range(self.depth):
                self._submit(index)
        self.wait.delivered(time.monotonic())  # the clocks start with the first calls

    def take(self, max_blocks: int, timeout: float) -> list[dict[str, Any]]:
        """Up to `max_blocks` finished blocks; waits up to `timeout` s for the first one only.
        Raises WorkerError for an actor out of restarts, ActorsUnavailable once no live node
        could hold an actor for `wait_timeout` seconds (and says what it waits for meanwhile)."""
        calls = list(self._calls)
        ready, _ = ray.wait(calls, num_returns=1, timeout=timeout)
        if ready:
            ready, _ = ray.wait(calls, num_returns=min(max_blocks, len(calls)), timeout=0)
        blocks, changed, delivered = [], False, False
        for call in ready:
            index = self._calls.pop(call)
            try:
                block = ray.get(call)
            except RayTaskError as error:  # the actor's code raised: replace its process
                changed = True
                if not self._replacing[index]:  # (its other calls may raise too)
                    self._replacing[index] = True
                    self._failed(index, error)
                    ray.kill(self.handles[index], no_restart=False)
            except RayActorError as error:  # its process or node died: Ray restarts it, or not
                changed = True
                self._check_alive(index, error)
            else:
                delivered = True
                process = (block["node_id"], block["pid"])
                if not (self._replacing[index] and process == self._processes[index]):
                    changed |= self._arrived(index, process)
                    blocks.append(block)  # (not from a process that failed)
            self._submit(index)
        if changed:
            self.count_restarts()
        if delivered:
            self.wait.delivered(time.monotonic())
        else:
            self._waiting()
        return blocks

    def count_restarts(self) -> int:
        """Updates `restarts`: Ray's count of restarts of every actor so far."""
        states = [private_apis.ray_actor_state(handle) for handle in self.handles]
        self.restarts = sum(state["NumRestarts"] for state in states)
        return self.restarts

    def queued_blocks(self) -> int:
        calls = list(self._calls)
        return len(ray.wait(calls, num_returns=len(calls), timeout=0)[0]) if calls else 0

    def stop(self) -> None:
        """Stops every actor and disconnects; safe to call more than once."""
        if not ray.is_initialized():
            return
        for handle in self.handles:
            with contextlib.suppress(Exception):
                ray.kill(handle, no_restart=True)
        self._calls.clear()
        ray.shutdown()

    def _waiting(self) -> None:
        """No block this time: checks the nodes (every second at most), says what the learner
        waits for when that is due, and raises ActorsUnavailable when the wait is over."""
        now = time.monotonic()
        if not self.wait.poll_due(now):
            return
        nodes = _nodes_that_fit(self.need)
        self.wait.observe(now, nodes)
        need = json.dumps(self.need)
        if self.wait.expired(now):
            raise ActorsUnavailable(
                f"no node of the Ray cluster could hold actors {_indices(len(self.handles))} "
                f"({need} each) for {self.wait.timeout:g} s (--actor_wait_timeout)"
            )
        if not self.wait.report_due(now):
            return
        if nodes:
            where = f"which {nodes} live node(s) of the Ray cluster offer"
        else:
            where = (
                f"which no live node of the Ray cluster has (for "
                f"{self.wait.without_node(now):.0f} s): "
            )
            if self.wait.timeout > 0:
                left = self.wait.timeout - self.wait.without_node(now)
                where += (
                    f"checkpoint and exit {ACTORS_UNAVAILABLE_EXIT} in {left:.0f} s "
                    f"(--actor_wait_timeout {self.wait.timeout:g})"
                )
            else:
                where += "waiting without end (--actor_wait_timeout 0)"
        print(
            f"[{self.label}] waiting for actors {self._states()}: no block for "
            f"{self.wait.without_block(now):.0f} s; each needs {need}, {where}",
            flush=True,  # a run's log may be a file: this line is why the run stands still
        )

    def _states(self) -> str:
        """ "0, 1 (RESTARTING)": each actor's state in Ray, actors of the same state together."""
        by_state: dict[str, list[int]] = {}
        for index, handle in enumerate(self.handles):
            by_state.setdefault(private_apis.ray_actor_state(handle)["State"], []).append(index)
        return "; ".join(
            f"{', '.join(map(str, indices))} ({state})" for state, indices in by_state.items()
        )

    def _submit(self, index: int) -> None:
        call = self.handles[index].collect.remote(*self._weights)
        self._calls[call] = index

    def _arrived(self, index: int, process: tuple[str, int]) -> bool:
        """Says where actor `index` runs when that changes (a restart); True if it did."""
        if process == self._processes[index]:
            return False
        self._processes[index], self._replacing[index] = process, False
        print(f"[{self.label}] actor {index} runs on node {process[0]} (pid {process[1]})")
        return True

    def _failed(self, index: int, error: RayTaskError) -> None:
        cause = error.cause
        text = str(cause).strip().splitlines()
        line = f"{type(cause).__name__}: {text[0] if text else ''}".strip()
        self._failures[index] = f"{line} (traceback: {self._traceback(index, error)})"
        print(f"[{self.label}] worker {index} failed: {self._failures[index]}; restarting it")

    def _check_alive(self, index: int, error: RayActorError) -> None:
        """Raises WorkerError if Ray will not restart actor `index` any more."""
        if private_apis.ray_actor_state(self.handles[index])["State"] != "DEAD":
            return
        failure = self._failures.get(index)
        if failure is None:  # it died without an exception of its own (killed, node lost)
            failure = f"its process or node died (traceback: {self._traceback(index, error)})"
        raise WorkerError(
            f"worker {index} failed: {failure}; no restart left "
            f"(--max_actor_restarts {self.max_restarts})"
        )

    def _traceback(self, index: int, error: Exception) -> str:
        import tensorflow as tf

        tf.io.gfile.makedirs(self.traceback_dir)
        path = join(self.traceback_dir, f"worker_{index}_traceback.txt")
        with tf.io.gfile.GFile(path, "w") as f:
            f.write(str(error)[-20_000:])
        return path


def _indices(n: int) -> str:
    return ", ".join(map(str, range(n)))


def _nodes_that_fit(need: dict[str, float]) -> int:
    """Live nodes of the cluster whose declared resources could hold an actor (busy or not)."""
    return sum(
        1
        for node in ray.nodes()
        if node.get("Alive")
        and all(node.get("Resources", {}).get(name, 0) >= amount for name, amount in need.items())
    )


def _start_ray(address: str | None, num_actors: int) -> None:
    private_apis.require("ray")  # the group reads Ray's internals (actor states) later
    # Actors act on CPU (accelerators are the learner's) and import this process's `rl`.
    python_path = os.pathsep.join(filter(None, [SOURCE_ROOT, os.environ.get("PYTHONPATH")]))
    env_vars = {"CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": python_path}
    options: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
        "runtime_env": {"env_vars": env_vars},
        "address": address,
    }
    if address is None:
        options.update(address="local", num_cpus=num_actors, object_store_memory=OBJECT_STORE_BYTES)
        # Actors share the cores with the learner as equals (Ray's default niceness of 15 would
        # also leave them the leftovers of every other process on the machine).
        options.update(private_apis.ray_worker_niceness(0))
    main_thread = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGTERM) if main_thread else None
    try:
        with children_ignore_stop_signals():
            ray.init(**options)
    except ConnectionError as error:
        raise WorkerError(f"no Ray cluster at --ray_address {address}: {error}") from None
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, handler)
