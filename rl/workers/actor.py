"""An Ape-X actor: steps its own envs with its own copy of the policy and streams n-step
transitions, with initial priorities, to the learner.

Horgan et al. 2018, "Distributed Prioritized Experience Replay", https://arxiv.org/abs/1803.00933.
The actor builds the same agent class as the learner (from the learner's hparams, with its own
epsilon and a 1-row replay: rl/workers/exploration.py) and runs the usual compiled collect loop
(rl/driver.py). The agent's n-step accumulator turns steps into n-step transitions actor-side;
instead of entering a local replay they go to an outbox installed as the agent's replay
(rl/workers/outbox.py).
Every `workers.block_steps` vector steps the actor computes their |TD errors| with its copy of
the network (`ReplayAgent.initial_priorities`: the paper's actor-side priorities, so the
learner's replay never has to guess) and sends one block: transitions, priorities, env steps,
finished episodes. Before each block it takes the newest weights the learner published
(rl/workers/weights.py) and sets its env step counter to the learner's, so schedules such as
learning_starts follow the run's total progress.

Lifecycle: the actor stops when the learner sets the stop event or its parent disappears. A
failure is reported once on the error queue (one line + the traceback) and the process exits 1.
"""

from __future__ import annotations

import queue
import time
import traceback
from collections.abc import Callable
from typing import Any

from rl.workers.processes import parent_alive

POLL_SECONDS = 0.5  # how often a waiting actor checks the stop event and its parent


def run_actor(
    index: int,
    num_actors: int,
    hparams_json: str,
    env_seed: int,
    agent_seed: int,
    parent_pid: int,
    blocks: Any,
    errors: Any,
    stop: Any,
    weights: dict[str, Any],
) -> int:
    """The actor process's main function; returns its exit status."""
    blocks.cancel_join_thread()  # never hang at exit on blocks the learner will not read
    try:
        _act(index, num_actors, hparams_json, env_seed, agent_seed, parent_pid, blocks, stop,
             weights)  # fmt: skip
        return 0
    except BaseException as error:  # every failure is reported once, then exit 1
        return report_failure(index, error, errors, stop)


def report_failure(index: int, error: BaseException, errors: Any, stop: Any) -> int:
    """Puts one (index, line, traceback) report on `errors`; returns the exit status (0 when
    the run is ending: errors while tearing down are not failures). Shared by every actor
    kind (this module's Ape-X actor, rl/workers/impala_actor.py)."""
    if stop.is_set():
        return 0
    # An env error surfaces wrapped by TF (the env steps inside the compiled collect
    # loop); report the env's own exception, which `_RecordingEnv` kept.
    error = _RecordingEnv.last_error or error
    text = str(error).strip().splitlines()
    line = f"{type(error).__name__}: {text[0] if text else ''}".strip()
    trace = "".join(traceback.format_exception(error))
    errors.put((index, line, trace[-20_000:]))
    return 1


def _act(index, num_actors, hparams_json, env_seed, agent_seed, parent_pid, blocks, stop,
         weights) -> None:  # fmt: skip
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import rl  # noqa: F401  (fills the registries)
    from rl.driver import Driver
    from rl.envs import make_vector_env
    from rl.envs.reward_augmentation import reward_augmentation_from_hparams
    from rl.hparams import HParams
    from rl.registry import get_agent
    from rl.workers.exploration import actor_hparams
    from rl.workers.outbox import Outbox
    from rl.workers.weights import SharedWeights, policy_variables

    learner_hp = HParams.from_json(hparams_json)
    hp = actor_hparams(learner_hp, index, num_actors)
    env, spec = make_vector_env(
        hp.env,
        hp.num_envs,
        env_seed,
        env_kwargs=hp.env_kwargs,
        max_episode_steps=hp.max_episode_steps,
        reward_augmentation=reward_augmentation_from_hparams(hp),
    )
    agent = get_agent(hp.agent)(spec, hp, agent_seed)
    variables = policy_variables(agent)
    outbox = Outbox()
    agent.replay = outbox  # completed n-step transitions go to the learner, not a replay
    prioritized = hp.memory == "prioritized"
    shared = SharedWeights.attach(weights)
    driver = Driver(_RecordingEnv(env), spec, agent)
    driver.reset(env_seed)

    def running() -> bool:
        return not stop.is_set() and parent_alive(parent_pid)

    version = 0
    try:
        while running():
            update = shared.read_if_newer(version)
            if update is not None:
                version, learner_steps, arrays = update
                for variable, array in zip(variables, arrays, strict=True):
                    variable.assign(array)
                agent.env_steps.assign(learner_steps)
            elif version == 0:  # no weights yet: never act with a random network
                time.sleep(0.05)
                continue
            start = time.monotonic()
            driver.collect(hp.workers.block_steps)
            transitions = outbox.drain()
            priorities = None
            if prioritized and transitions is not None:
                priorities = agent.initial_priorities(transitions)
            returns, lengths = driver.stats.pop()
            block = {
                "worker": index,
                "transitions": transitions,
                "priorities": priorities,
                "env_steps": hp.workers.block_steps * spec.num_envs,
                "episode_returns": returns,
                "episode_lengths": lengths,
                "epsilon": agent.metrics().get("train/epsilon"),
                "collect_seconds": time.monotonic() - start,
                "weights_version": version,
            }
            send_block(blocks, block, running)
    finally:
        env.close()


def send_block(blocks: Any, block: dict[str, Any], running: Callable[[], bool]) -> None:
    """Puts `block` on the bounded queue, waiting while it is full as long as `running()`."""
    while running():
        try:
            blocks.put(block, timeout=POLL_SECONDS)
            return
        except queue.Full:
            continue


class _RecordingEnv:
    """The vector env, with the exception of a failed step kept for the error report."""

    last_error: BaseException | None = None

    def __init__(self, env: Any) -> None:
        self._env = env

    def step(self, actions):
        try:
            return self._env.step(actions)
        except BaseException as error:
            _RecordingEnv.last_error = error
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)
