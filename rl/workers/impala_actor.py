"""An IMPALA actor: steps num_envs / N env copies and sends unrolls of T steps with the
behaviour log-probs (Espeholt et al. 2018, https://arxiv.org/abs/1802.01561, section 3).

Its agent is the learner's IMPALA agent with its share of the env copies; each block is one
unroll (`rl.workers.unrolls.pop_unroll`: obs, actions, rewards, terminations, truncations with
their final observations, behaviour log-probs, and the observation after the last step), acted
with one version of the weights, which travels with it; its episodes go on in the next unroll.
What every actor does: rl/workers/actor.py.
"""

from __future__ import annotations

from typing import Any

from rl.hparams import HParams
from rl.workers.actor import RemoteActor
from rl.workers.unrolls import pop_unroll


def actor_hparams(hparams: HParams, num_actors: int) -> HParams:
    """The learner's hparams for one of `num_actors` actors: num_envs / N env copies, the same
    unroll length T = train_every // num_envs (so train_every = T * num_envs / N)."""
    hp = hparams.copy()
    unroll_length = max(1, hparams.train_every // hparams.num_envs)
    hp.num_envs = hparams.num_envs // num_actors
    hp.train_every = unroll_length * hp.num_envs
    return hp.freeze()


class ImpalaActor(RemoteActor):
    def actor_hparams(self, hparams: HParams, index: int, num_actors: int) -> HParams:
        return actor_hparams(hparams, num_actors)

    def block(self) -> dict[str, Any]:
        self.driver.collect(self.agent.unroll_length)
        return {
            "unroll": pop_unroll(self.agent),
            "env_steps": self.agent.unroll_length * self.spec.num_envs,
            "epsilon": None,  # no epsilon: the policy samples (rl/workers/progress.py)
        }
