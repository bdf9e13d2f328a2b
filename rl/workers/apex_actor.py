"""An Ape-X actor (Horgan et al. 2018, "Distributed Prioritized Experience Replay",
https://arxiv.org/abs/1803.00933). A block is `workers.block_steps` vector steps, sent with the
|TD errors| the actor's copy of the network computes (the paper's actor-side priorities: the
learner's replay never has to guess).
"""

from __future__ import annotations

from typing import Any

from rl.hparams import HParams
from rl.workers.actor import RemoteActor
from rl.workers.exploration import actor_hparams
from rl.workers.outbox import Outbox


class ApexActor(RemoteActor):
    def actor_hparams(self, hparams: HParams, index: int, num_actors: int) -> HParams:
        return actor_hparams(hparams, index, num_actors)

    def _build(self) -> None:
        super()._build()
        self.agent.replay = Outbox()  # no replay table here: n-step transitions go to the learner

    def block(self) -> dict[str, Any]:
        agent, hp = self.agent, self.hp
        self.driver.collect(hp.workers.block_steps)
        transitions = agent.replay.drain()
        priorities = None
        if hp.memory == "prioritized" and transitions is not None:
            priorities = agent.initial_priorities(transitions)
        return {
            "transitions": transitions,
            "priorities": priorities,
            "env_steps": hp.workers.block_steps * self.spec.num_envs,
            "epsilon": agent.metrics().get("train/epsilon"),
        }
