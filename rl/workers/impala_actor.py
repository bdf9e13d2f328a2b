"""An IMPALA actor: steps its share of the env copies with the newest policy it has and sends
unrolls, with the behaviour log-probs recorded while acting, to the learner.

Espeholt et al. 2018, "IMPALA: Scalable Distributed Deep-RL with Importance Weighted
Actor-Learner Architectures", https://arxiv.org/abs/1802.01561, section 3. Actor i of N builds
the IMPALA agent from the learner's hparams with num_envs / N env copies (the unroll length T
unchanged) and runs the usual compiled collect loop (rl/rollout/driver.py). Before each unroll it
copies the newest weights the learner published (rl/workers/weights.py), if any, so the whole unroll
has one behaviour policy, whose version travels with it; it never waits for the learner except
when the bounded queue is full. An unroll is T steps of its env copies
(`rl.workers.unrolls.pop_unroll`: obs, actions, rewards, terminations, truncations with their final
observations, behaviour log-probs, and the observation after the last step); its episodes go on in
the next unroll.
The process lifecycle (boot, stop event, parent death, failure reports) is every actor's
(rl/workers/actor_session.py, boot.py); rl/workers/actor_pool.py starts this module's
`run_impala_actor` instead of the Ape-X actor's `run_actor`.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

from rl.workers.actor_session import ActorSession, run_actor_process

if TYPE_CHECKING:
    from rl.hparams import HParams

ENTRY = "rl.workers.impala_actor:run_impala_actor"  # what rl/workers/boot.py runs


def actor_hparams(hparams: HParams, num_actors: int) -> HParams:
    """The learner's hparams for one of `num_actors` actors: num_envs / N env copies, the same
    unroll length T = train_every // num_envs (so train_every = T * num_envs / N)."""
    hp = hparams.copy()
    unroll_length = max(1, hparams.train_every // hparams.num_envs)
    hp.num_envs = hparams.num_envs // num_actors
    hp.train_every = unroll_length * hp.num_envs
    return hp.freeze()


def _act(index, num_actors, hparams_json, env_seed, agent_seed, parent_pid, blocks, stop,
         weights) -> None:  # fmt: skip
    from rl.hparams import HParams
    from rl.workers.unrolls import pop_unroll

    hp = actor_hparams(HParams.from_json(hparams_json), num_actors)
    session = ActorSession(hp, env_seed, agent_seed, parent_pid, blocks, stop, weights)
    agent = session.agent
    try:
        for version, _ in session.rounds():
            start = time.monotonic()
            session.driver.collect(agent.unroll_length)
            returns, lengths = session.driver.stats.pop()
            block = {
                "worker": index,
                "unroll": pop_unroll(agent),
                "weights_version": version,
                "env_steps": agent.unroll_length * session.spec.num_envs,
                "episode_returns": returns,
                "episode_lengths": lengths,
                "epsilon": None,  # no epsilon: the policy samples (rl/workers/progress.py)
                "collect_seconds": time.monotonic() - start,
            }
            session.send(block)
    finally:
        session.close()


run_impala_actor = functools.partial(run_actor_process, _act)
