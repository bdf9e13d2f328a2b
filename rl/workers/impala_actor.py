"""An IMPALA actor: steps num_envs / N env copies and sends unrolls of T steps with the behaviour
log-probs (Espeholt et al. 2018, https://arxiv.org/abs/1802.01561, section 3).

Each call returns `workers.queue_blocks` + 1 unrolls: the same policy lag as one unroll per call
with that many calls in flight, but Ray's cost of a call (about 1 ms of CPU, docs/workers.md)
and the weights' load are paid once.
"""

from __future__ import annotations

from typing import Any

from rl.hparams import HParams
from rl.workers.actor import RemoteActor
from rl.workers.unrolls import pop_unroll


def actor_hparams(hparams: HParams, num_actors: int) -> HParams:
    """num_envs / N env copies, the learner's unroll length T = train_every // num_envs."""
    hp = hparams.copy()
    unroll_length = max(1, hparams.train_every // hparams.num_envs)
    hp.num_envs = hparams.num_envs // num_actors
    hp.train_every = unroll_length * hp.num_envs
    return hp.freeze()


class ImpalaActor(RemoteActor):
    def actor_hparams(self, hparams: HParams, index: int, num_actors: int) -> HParams:
        return actor_hparams(hparams, num_actors)

    def block(self) -> dict[str, Any]:
        unrolls = []
        for _ in range(self.hp.workers.queue_blocks + 1):
            self.driver.collect(self.agent.unroll_length)
            unrolls.append(pop_unroll(self.agent))
        return {
            "unrolls": unrolls,
            "env_steps": len(unrolls) * self.agent.unroll_length * self.spec.num_envs,
            "epsilon": None,  # no epsilon: the policy samples (rl/workers/progress.py)
        }
