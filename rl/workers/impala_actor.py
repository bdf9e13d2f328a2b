"""An IMPALA actor: steps its share of the env copies with the newest policy it has and sends
unrolls, with the behaviour log-probs recorded while acting, to the learner.

Espeholt et al. 2018, "IMPALA: Scalable Distributed Deep-RL with Importance Weighted
Actor-Learner Architectures", https://arxiv.org/abs/1802.01561, section 3. Actor i of N builds
the IMPALA agent from the learner's hparams with num_envs / N env copies (the unroll length T
unchanged) and runs the usual compiled collect loop (rl/driver.py). Before each unroll it copies
the newest weights the learner published (rl/workers/weights.py), if any, so the whole unroll
has one behaviour policy, whose version travels with it; it never waits for the learner except
when the bounded queue is full. An unroll is T steps of its env copies
(`rl.workers.unrolls.pop_unroll`:
obs, actions, rewards, terminations, truncations with their final observations, behaviour
log-probs, and the observation after the last step); its episodes go on in the next unroll.

The process lifecycle (boot, stop event, parent death, failure reports) is the Ape-X actor's
(rl/workers/actor.py, boot.py); rl/workers/actor_pool.py starts this module's
`run_impala_actor` instead of `run_actor`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rl.workers.actor import _RecordingEnv, report_failure, send_block
from rl.workers.processes import parent_alive

if TYPE_CHECKING:
    from rl.hparams import HParams

ENTRY = "rl.workers.impala_actor:run_impala_actor"  # what rl/workers/boot.py runs


def run_impala_actor(
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
    """The actor process's main function (rl/workers/actor_pool.py's arguments); returns its
    exit status."""
    blocks.cancel_join_thread()  # never hang at exit on blocks the learner will not read
    try:
        _act(index, num_actors, hparams_json, env_seed, agent_seed, parent_pid, blocks, stop,
             weights)  # fmt: skip
        return 0
    except BaseException as error:  # every failure is reported once, then exit 1
        return report_failure(index, error, errors, stop)


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
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import rl  # noqa: F401  (fills the registries)
    from rl.driver import Driver
    from rl.envs import make_vector_env
    from rl.envs.reward_augmentation import reward_augmentation_from_hparams
    from rl.hparams import HParams
    from rl.registry import get_agent
    from rl.workers.unrolls import pop_unroll
    from rl.workers.weights import SharedWeights, policy_variables

    hp = actor_hparams(HParams.from_json(hparams_json), num_actors)
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
                version, _, arrays = update
                for variable, array in zip(variables, arrays, strict=True):
                    variable.assign(array)
            elif version == 0:  # no weights yet: never act with a random network
                time.sleep(0.05)
                continue
            start = time.monotonic()
            driver.collect(agent.unroll_length)
            returns, lengths = driver.stats.pop()
            block = {
                "worker": index,
                "unroll": pop_unroll(agent),
                "weights_version": version,
                "env_steps": agent.unroll_length * spec.num_envs,
                "episode_returns": returns,
                "episode_lengths": lengths,
                "epsilon": None,  # no epsilon: the policy samples (rl/workers/progress.py)
                "collect_seconds": time.monotonic() - start,
            }
            send_block(blocks, block, running)
    finally:
        env.close()
