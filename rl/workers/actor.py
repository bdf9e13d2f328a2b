"""The body of a Ray actor (rl/workers/actor_group.py makes it one), whatever it sends (Ape-X
transitions, IMPALA unrolls): the acting role of the learner's agent class (`build_actor`: no
optimizer state, no replay table), from hparams its subclass adapts, its own vector env and the
compiled collect loop, on one TF thread. It builds them on its first call; one that Ray
restarted seeds them anew, so it does not replay its first episodes. An env's exception, wrapped
by TF, is raised as the env's own, which `RecordingEnv` kept.
"""

from __future__ import annotations

import os
import time
from typing import Any

from rl.hparams import HParams


class RemoteActor:
    """An actor's envs, agent and collect loop; subclasses say what a block holds."""

    def __init__(self, index: int, num_actors: int, hparams_json: str, seeds: tuple[int, int]):
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        os.environ["RL_WORKER_INDEX"] = str(index)  # envs may read which actor they run in
        self.index = index
        self.hp = self.actor_hparams(HParams.from_json(hparams_json), index, num_actors)
        self.seeds = seeds  # (env, agent) seeds of the first process
        self.version = 0  # of the weights in the agent
        self.agent = None

    def actor_hparams(self, hparams: HParams, index: int, num_actors: int) -> HParams:
        """The hparams this actor builds its agent and envs from."""
        raise NotImplementedError

    def block(self) -> dict[str, Any]:
        """Collects one block with the current weights: the keys that vary by actor kind."""
        raise NotImplementedError

    def collect(self, weights: list, version: int, learner_steps: int) -> dict:
        """One block acted with publication `version` of the weights (arrays or an object ref)."""
        import ray

        if self.agent is None:
            self._build()
        if version != self.version:
            (arrays,) = weights
            if isinstance(arrays, ray.ObjectRef):
                arrays = ray.get(arrays)
            (flat,) = arrays  # rl/workers/weights.py
            self.policy.load(flat)
            # Schedules follow the run's progress (the learner's count when it published, which
            # this actor's own steps may have passed meanwhile).
            own = int(self.agent.env_steps.numpy())
            self.agent.env_steps.assign(max(own, learner_steps))
            self.version = version
        start = time.monotonic()
        try:
            block = self.block()
        except BaseException as error:
            raise (RecordingEnv.last_error or error) from None
        returns, lengths = self.driver.stats.pop()
        block.update(
            worker=self.index,
            episode_returns=returns,
            episode_lengths=lengths,
            collect_seconds=time.monotonic() - start,
            weights_version=version,
            node_id=self.node_id,
            pid=os.getpid(),
        )
        return block

    def _build(self) -> None:
        import ray

        import rl  # noqa: F401  (fills the registries)
        from rl.agents.build import build_actor
        from rl.envs import make_vector_env
        from rl.envs.reward_augmentation import reward_augmentation_from_hparams
        from rl.rollout.driver import Driver
        from rl.utils.seeding import derive_seed
        from rl.workers.weights import PolicyWeights

        hp = self.hp
        env_seed, agent_seed = self.seeds
        context = ray.get_runtime_context()
        self.node_id = context.get_node_id()
        if context.was_current_actor_reconstructed:  # new episodes, not the first process's
            restart = context.get_worker_id()
            env_seed, agent_seed = (derive_seed(s, "restart", restart) for s in self.seeds)
        env, self.spec = make_vector_env(
            hp.env,
            hp.num_envs,
            env_seed,
            env_kwargs=hp.env_kwargs,
            max_episode_steps=hp.max_episode_steps,
            reward_augmentation=reward_augmentation_from_hparams(hp),
        )
        self.agent = build_actor(hp, self.spec, agent_seed)  # weights: the learner's, on collect
        self.policy = PolicyWeights(self.agent)
        self.driver = Driver(RecordingEnv(env), self.spec, self.agent)
        self.driver.reset(env_seed)


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
