"""The learner's handle on its N actor processes: start, feed weights, receive blocks, watch
health, stop.

Channels (multiprocessing, spawn context):
- `blocks`: one bounded queue all actors put their blocks of transitions on (maxsize
  `workers.queue_blocks` * N). When the learner falls behind, actors wait on it: backpressure
  instead of unbounded memory.
- weights: one shared-memory block the learner publishes into (rl/workers/weights.py).
- `errors`: an unbounded queue for one (index, line, traceback) message per failed actor.
- `stop`: an Event every actor polls at least every 0.5 s.

`check` turns a reported failure, or an actor that died without reporting (killed, OOM), into a
one-line WorkerError. `stop` is safe to call at any time, more than once, and leaves no child
process behind (rl/utils/processes.py).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import runpy
import time
from typing import Any

import numpy as np

from rl.errors import WorkerError
from rl.utils.processes import children_ignore_stop_signals, stop_processes
from rl.workers.weights import SharedWeights

BOOT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boot.py")
REPORT_GRACE_SECONDS = 2.0  # how long a dead actor's error report may take to arrive


class ActorPool:
    """N actor processes feeding one learner (this process)."""

    def __init__(
        self,
        num_actors: int,
        hparams_json: str,
        env_seeds: list[int],
        agent_seeds: list[int],
        initial_weights: list[np.ndarray],
        queue_blocks: int,
        entry: str = "rl.workers.actor:run_actor",
    ) -> None:
        """`entry` ("module:function") is the actors' main function: Ape-X's by default;
        rl/engines/impala.py passes IMPALA's. It takes the arguments listed below."""
        self.num_actors = num_actors
        self._context = multiprocessing.get_context("spawn")
        self._blocks = self._context.Queue(maxsize=queue_blocks * num_actors)
        self._errors = self._context.Queue()
        self._stop = self._context.Event()
        self.weights = SharedWeights(self._context, initial_weights)
        self._processes = []
        for index in range(num_actors):
            args = {
                "index": index,
                "num_actors": num_actors,
                "hparams_json": hparams_json,
                "env_seed": env_seeds[index],
                "agent_seed": agent_seeds[index],
                "parent_pid": os.getpid(),
                "blocks": self._blocks,
                "errors": self._errors,
                "stop": self._stop,
                "weights": self.weights.handles(),
                "entry": entry,
            }
            self._processes.append(
                self._context.Process(
                    target=runpy.run_path,
                    args=(BOOT_PATH,),
                    kwargs={"init_globals": {"ACTOR_ARGS": args}, "run_name": "__rl_actor__"},
                    name=f"rl-actor-{index}",
                    daemon=True,
                )
            )
        self._stopped = False

    @property
    def pids(self) -> list[int | None]:
        return [process.pid for process in self._processes]

    def start(self) -> None:
        with children_ignore_stop_signals():
            for process in self._processes:
                process.start()

    def publish(self, arrays: list[np.ndarray], env_steps: int) -> None:
        self.weights.publish(arrays, env_steps)

    def take(self, max_blocks: int, timeout: float) -> list[dict[str, Any]]:
        """Up to `max_blocks` blocks; waits up to `timeout` seconds for the first one only."""
        out: list[dict[str, Any]] = []
        try:
            if timeout > 0:
                out.append(self._blocks.get(timeout=timeout))
            while len(out) < max_blocks:
                out.append(self._blocks.get_nowait())
        except queue.Empty:
            pass
        return out

    def queued_blocks(self) -> int:
        try:
            return self._blocks.qsize()
        except NotImplementedError:  # macOS
            return -1

    def check(self, traceback_dir: str | None = None) -> None:
        """Raises WorkerError if an actor reported a failure or died."""
        report = self._report(timeout=0.0)
        if report is None:
            dead = [(i, p.exitcode) for i, p in enumerate(self._processes) if not p.is_alive()]
            if not dead:
                return
            report = self._report(timeout=REPORT_GRACE_SECONDS)  # it may be on its way
            if report is None:
                index, code = dead[0]
                how = f"killed by signal {-code}" if code and code < 0 else f"exit status {code}"
                raise WorkerError(f"worker {index} died without an error report ({how})")
        index, line, trace = report
        where = ""
        if traceback_dir is not None:
            where = f" (traceback: {_write_traceback(traceback_dir, index, trace)})"
        raise WorkerError(f"worker {index} failed: {line}{where}")

    def stop(self, timeout: float = 5.0) -> None:
        """Asks every actor to stop, then makes sure none is left (terminate, kill)."""
        if self._stopped:
            return
        self._stopped = True
        self._stop.set()
        started = [p for p in self._processes if p.pid is not None]
        # Actors blocked on a full queue notice `stop` within POLL_SECONDS (actor_session.py);
        # draining helps too.
        deadline = time.monotonic() + timeout
        while any(p.is_alive() for p in started) and time.monotonic() < deadline:
            self.take(max_blocks=64, timeout=0.05)
        stop_processes(started, timeout=max(0.0, deadline - time.monotonic()))
        for channel in (self._blocks, self._errors):
            channel.cancel_join_thread()
            channel.close()

    def _report(self, timeout: float) -> tuple[int, str, str] | None:
        try:
            if timeout > 0:
                return self._errors.get(timeout=timeout)
            return self._errors.get_nowait()
        except queue.Empty:
            return None


def _write_traceback(directory: str, index: int, trace: str) -> str:
    import tensorflow as tf

    from rl.utils.files import join

    tf.io.gfile.makedirs(directory)
    path = join(directory, f"worker_{index}_traceback.txt")
    with tf.io.gfile.GFile(path, "w") as f:
        f.write(trace)
    return path
