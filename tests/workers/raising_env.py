"""Test-only env: CartPole that raises after a number of steps, to inject a worker failure.

Used by name (`tests.workers.raising_env:RaisingCartPole`), so worker processes import it
themselves. It raises only when the test asks, through environment variables the worker
processes inherit: RL_TEST_RAISE_AFTER=K raises on step K+1 of an env instance, and
RL_TEST_RAISE_IN_WORKER=i restricts that to the actor with RL_WORKER_INDEX=i (set by
rl/workers/actor.py). Without RL_TEST_RAISE_AFTER it is plain CartPole, so a run that crashed
can be resumed with the same hparams.
"""

from __future__ import annotations

import os

from gymnasium.envs.classic_control import CartPoleEnv


class RaisingCartPole(CartPoleEnv):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._steps = 0
        after = os.environ.get("RL_TEST_RAISE_AFTER")
        worker = os.environ.get("RL_TEST_RAISE_IN_WORKER")
        here = os.environ.get("RL_WORKER_INDEX")
        chosen = after is not None and (worker is None or worker == here)
        self._raise_after = int(after) if chosen else None

    def step(self, action):
        self._steps += 1
        if self._raise_after is not None and self._steps > self._raise_after:
            raise RuntimeError(f"injected failure after {self._raise_after} steps")
        return super().step(action)
