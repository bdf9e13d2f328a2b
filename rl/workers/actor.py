"""An Ape-X actor: steps its own envs with its own copy of the policy and streams n-step
transitions, with initial priorities, to the learner.

Horgan et al. 2018, "Distributed Prioritized Experience Replay", https://arxiv.org/abs/1803.00933.
The actor builds the same agent class as the learner (from the learner's hparams, with its own
epsilon and a 1-row replay: rl/workers/exploration.py) and runs the usual compiled collect loop
(rl/rollout/driver.py). The agent's n-step accumulator turns steps into n-step transitions
actor-side; instead of entering a local replay they go to an outbox installed as the agent's replay
(rl/workers/outbox.py).
Every `workers.block_steps` vector steps the actor computes their |TD errors| with its copy of
the network (`ReplayAgent.initial_priorities`: the paper's actor-side priorities, so the
learner's replay never has to guess) and sends one block: transitions, priorities, env steps,
finished episodes. Before each block it takes the newest weights the learner published
(rl/workers/weights.py) and sets its env step counter to the learner's, so schedules such as
learning_starts follow the run's total progress.

Lifecycle, weights and the queue: `rl.workers.actor_session`.
"""

from __future__ import annotations

import functools
import time

from rl.workers.actor_session import ActorSession, run_actor_process


def _act(index, num_actors, hparams_json, env_seed, agent_seed, parent_pid, blocks, stop,
         weights) -> None:  # fmt: skip
    from rl.hparams import HParams
    from rl.workers.exploration import actor_hparams
    from rl.workers.outbox import Outbox

    hp = actor_hparams(HParams.from_json(hparams_json), index, num_actors)
    session = ActorSession(hp, env_seed, agent_seed, parent_pid, blocks, stop, weights)
    agent, spec = session.agent, session.spec
    outbox = Outbox()
    agent.replay = outbox  # completed n-step transitions go to the learner, not a replay
    prioritized = hp.memory == "prioritized"
    seen = 0
    try:
        for version, learner_steps in session.rounds():
            if version != seen:  # new weights: schedules follow the run's progress
                agent.env_steps.assign(learner_steps)
                seen = version
            start = time.monotonic()
            session.driver.collect(hp.workers.block_steps)
            transitions = outbox.drain()
            priorities = None
            if prioritized and transitions is not None:
                priorities = agent.initial_priorities(transitions)
            returns, lengths = session.driver.stats.pop()
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
            session.send(block)
    finally:
        session.close()


run_actor = functools.partial(run_actor_process, _act)  # what rl/workers/boot.py runs
