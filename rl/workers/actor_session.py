"""What every actor process does the same way, whatever it sends (Ape-X transitions, IMPALA
unrolls): one TF thread, the agent and its envs built from the learner's hparams, the newest
published weights before each block, blocks on the bounded queue while the run goes on, and one
failure report.

Lifecycle: an actor stops when the learner sets the stop event or its parent disappears. A
failure is reported once on the error queue (one line + the traceback) and the process exits 1.
"""

from __future__ import annotations

import queue
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from rl.utils.processes import parent_alive

POLL_SECONDS = 0.5  # how often a waiting actor checks the stop event and its parent
# An actor's main function: (index, num_actors, hparams_json, env_seed, agent_seed, parent_pid,
# blocks, stop, weights) -> None.
Act = Callable[..., None]


def run_actor_process(
    act: Act, index: int, num_actors: int, hparams_json: str, env_seed: int, agent_seed: int,
    parent_pid: int, blocks: Any, errors: Any, stop: Any, weights: dict[str, Any],
) -> int:  # fmt: skip
    """An actor process's main function around `act`; returns its exit status."""
    blocks.cancel_join_thread()  # never hang at exit on blocks the learner will not read
    try:
        act(index, num_actors, hparams_json, env_seed, agent_seed, parent_pid, blocks, stop,
            weights)  # fmt: skip
        return 0
    except BaseException as error:  # every failure is reported once, then exit 1
        return report_failure(index, error, errors, stop)


def report_failure(index: int, error: BaseException, errors: Any, stop: Any) -> int:
    """Puts one (index, line, traceback) report on `errors`; returns the exit status (0 when
    the run is ending: errors while tearing down are not failures)."""
    if stop.is_set():
        return 0
    # An env error surfaces wrapped by TF (the env steps inside the compiled collect
    # loop); report the env's own exception, which `RecordingEnv` kept.
    error = RecordingEnv.last_error or error
    text = str(error).strip().splitlines()
    line = f"{type(error).__name__}: {text[0] if text else ''}".strip()
    trace = "".join(traceback.format_exception(error))
    errors.put((index, line, trace[-20_000:]))
    return 1


class ActorSession:
    """An actor's agent, envs and driver (built in the actor process), and its rounds."""

    def __init__(self, hp, env_seed: int, agent_seed: int, parent_pid: int, blocks: Any,
                 stop: Any, weights: dict[str, Any]) -> None:  # fmt: skip
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        import rl  # noqa: F401  (fills the registries)
        from rl.envs import make_vector_env
        from rl.envs.reward_augmentation import reward_augmentation_from_hparams
        from rl.registry import get_agent
        from rl.rollout.driver import Driver
        from rl.workers.weights import SharedWeights, policy_variables

        self.hp, self.parent_pid, self.blocks, self.stop = hp, parent_pid, blocks, stop
        self.env, self.spec = make_vector_env(
            hp.env,
            hp.num_envs,
            env_seed,
            env_kwargs=hp.env_kwargs,
            max_episode_steps=hp.max_episode_steps,
            reward_augmentation=reward_augmentation_from_hparams(hp),
        )
        self.agent = get_agent(hp.agent)(self.spec, hp, agent_seed)
        self.variables = policy_variables(self.agent)
        self.shared = SharedWeights.attach(weights)
        self.driver = Driver(RecordingEnv(self.env), self.spec, self.agent)
        self.driver.reset(env_seed)

    def running(self) -> bool:
        return not self.stop.is_set() and parent_alive(self.parent_pid)

    def rounds(self) -> Iterator[tuple[int, int]]:
        """(weights version, learner's env steps) before each block, while the run goes on:
        the newest published weights are in the agent. Never acts with a random network."""
        version, learner_steps = 0, 0
        while self.running():
            update = self.shared.read_if_newer(version)
            if update is not None:
                version, learner_steps, arrays = update
                for variable, array in zip(self.variables, arrays, strict=True):
                    variable.assign(array)
            elif version == 0:  # no weights yet
                time.sleep(0.05)
                continue
            yield version, learner_steps

    def send(self, block: dict[str, Any]) -> None:
        """Puts `block` on the bounded queue, waiting while it is full as long as the run
        goes on."""
        while self.running():
            try:
                self.blocks.put(block, timeout=POLL_SECONDS)
                return
            except queue.Full:
                continue

    def close(self) -> None:
        self.env.close()


class RecordingEnv:
    """The vector env, with the exception of a failed step kept for the error report."""

    last_error: BaseException | None = None

    def __init__(self, env: Any) -> None:
        self._env = env

    def step(self, actions):
        try:
            return self._env.step(actions)
        except BaseException as error:
            RecordingEnv.last_error = error
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)
