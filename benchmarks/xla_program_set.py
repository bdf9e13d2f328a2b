"""Which of our compiled programs the XLA bundle holds, and how each is built from `rl`.

Why these: they are the programs a GPU would run for us. The compiled PPO iteration of
`ppo_tf_cartpole` (`CompiledPPO.iteration`: rollout in TF-ops envs, GAE, every epoch) at 1 to
8,192 envs, 32 steps per env and 4 minibatches (benchmarks/accelerator_check.py's sizes); the
tuner's population program (`CompiledPPOSeeds.iteration`, members differing in every
population key, values drawn as `rl.tune.pbt.initial_values` draws them) and its PBT
exploit/explore step (`exploit_explore`, here under XLA); the DQN and SAC learner updates
(`agent.learner_step`: K gradient steps on a [K, B] replay sample, one call, as `update` runs
them) at batch 256; and one PPO minibatch update of the Nature CNN on Atari frames, in float32
and in `mixed_bfloat16`.

The "small" profile is the same programs at sizes that CI's 2 cores export and replay in
about a minute; "full" is the list the GPU run measures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import numpy as np
import tensorflow as tf

import rl  # noqa: F401  (fills the registries)
from benchmarks.xla_export import Program
from rl import registry
from rl.agents.build import build_agent
from rl.compiled import CompiledPPO, CompiledPPOSeeds
from rl.compiled.population import POPULATION_KEYS
from rl.envs import make_vector_env
from rl.envs.tf import make_tf_env
from rl.hparams import HParams
from rl.rollout.driver import Driver
from rl.tune.pbt import exploit_choices, initial_values

PPO_SET = "ppo_tf_cartpole"
STEPS_PER_ENV = 32  # and 4 minibatches per epoch, whatever the envs (accelerator_check.py)


@dataclasses.dataclass(frozen=True)
class Sizes:
    ppo_envs: tuple[int, ...]
    population: int
    learner_batch: int
    learner_steps: int | None  # K gradient steps per call; None: the set's `gradient_steps`
    cnn_batch: int


PROFILES = {
    "full": Sizes(
        ppo_envs=(1, 64, 1024, 8192),
        population=32,
        learner_batch=256,
        learner_steps=None,
        cnn_batch=256,
    ),
    "small": Sizes(
        ppo_envs=(1, 64), population=4, learner_batch=256, learner_steps=4, cnn_batch=32
    ),
}


def hparams(name: str, overrides: str = "", **values) -> HParams:
    """Set `name` with `--hparam_override`-style `overrides`, then `values` key by key, frozen."""
    hp = registry.get_hparams(name)()
    if overrides:
        hp.override(overrides)
    for key, value in values.items():
        setattr(hp, key, value)
    hp.freeze()
    return hp


def compiled_ppo(num_envs: int) -> Iterator[Program]:
    batch = max(num_envs * STEPS_PER_ENV // 4, 1)
    hp = hparams(
        PPO_SET, f"num_envs={num_envs},train_every={num_envs * STEPS_PER_ENV},batch_size={batch}"
    )
    env = make_tf_env(hp.env, max_episode_steps=hp.max_episode_steps, **hp.env_kwargs)
    ppo = CompiledPPO(hp, env, seed=0)
    yield Program(
        name=f"ppo_cartpole_{num_envs}env",
        about=f"{PPO_SET} compiled PPO iteration, {num_envs} envs x {STEPS_PER_ENV} steps, "
        f"{hp.n_epochs} epochs x 4 minibatches",
        function=ppo.iteration,
        unit="env steps",
        per_call=ppo.steps_per_iteration,
    )


def population(size: int) -> Iterator[Program]:
    """The population iteration, then the PBT exploit/explore step of the same members."""
    base = hparams(PPO_SET)
    space = registry.get_search_space("ppo").restricted(list(POPULATION_KEYS))
    members = [hparams(PPO_SET, **values) for values in initial_values(space, size, seed=0)]
    env = make_tf_env(base.env, max_episode_steps=base.max_episode_steps)
    joint = CompiledPPOSeeds(base, env, list(range(size)), members)
    yield Program(
        name=f"population_{size}",
        about=f"{size}-member {PPO_SET} population iteration (the tuner's program), "
        f"members differing in {', '.join(joint.population.keys)}",
        function=joint.iteration,
        unit="env steps",
        per_call=size * joint.steps_per_iteration,
    )
    # PBT's round: the bottom quarter copies a top member, every member takes fresh values.
    choices = exploit_choices(list(range(size)), 0.25, np.random.default_rng(0))
    source = tf.constant([choices.get(s, s) for s in range(size)], tf.int32)
    fresh = initial_values(space, size, seed=1)
    values = {
        key: tf.constant([float(v[key]) for v in fresh], tf.float32)
        for key in joint.population.keys
    }
    step = tf.function(joint.exploit_explore.python_function, jit_compile=True, autograph=False)
    yield Program(
        name=f"pbt_step_{size}",
        about=f"PBT exploit/explore of the {size} members: {len(choices)} copy a top member's "
        "weights and optimizer slots, all take new population values",
        function=step,
        args=(source, values),
        unit="PBT steps",
        per_call=1,
    )


def _replay_agent(name: str, batch: int, steps: int | None):
    """(agent, [K, B] replay sample): `name`'s agent after acting in its env to fill a replay."""
    hp = hparams(name, f"batch_size={batch}" + (f",gradient_steps={steps}" if steps else ""))
    env, spec = make_vector_env(
        hp.env, hp.num_envs, 0, env_kwargs=hp.env_kwargs, max_episode_steps=hp.max_episode_steps
    )
    agent = build_agent(hp, spec, 0)
    driver = Driver(env, spec, agent)
    driver.reset(0)
    driver.collect((batch + 64) // hp.num_envs + 1)  # a replay that can fill a batch
    env.close()
    sample = agent.replay.sample(batch, num_batches=hp.gradient_steps, beta=0.4)
    sample.pop("indices")
    return agent, {key: tf.constant(value) for key, value in sample.items()}


def learner(name: str, batch: int, steps: int | None) -> Iterator[Program]:
    agent, sample = _replay_agent(name, batch, steps)
    k = int(sample["reward"].shape[0])
    yield Program(
        name=f"{name.split('_')[0]}_learner",
        about=f"{name} learner update: {k} gradient steps on batches of {batch} in one call",
        function=tf.function(agent.learner_step, jit_compile=True),
        args=(sample,),
        unit="gradient steps",
        per_call=k,
    )


def atari_frames(rng: np.random.Generator, batch: int, shape: tuple[int, ...]) -> np.ndarray:
    """[batch, 84, 84, 4] uint8 stand-ins for Atari frames: a dark field with a few bright
    blocks (mostly background, as the games are, so the bundle compresses them)."""
    frames = np.zeros((batch, *shape), np.uint8)
    for b in range(batch):
        for _ in range(6):
            y, x = rng.integers(0, shape[0] - 8), rng.integers(0, shape[1] - 8)
            frames[b, y : y + 8, x : x + 4] = rng.integers(60, 256)
    return frames


def cnn_minibatch(precision: str, batch: int) -> Iterator[Program]:
    """One PPO minibatch step of ppo_breakout's Nature CNN (`agent.minibatch_step`: the step
    each epoch of `update` takes per minibatch)."""
    hp = hparams("ppo_breakout", f"precision={precision}")
    env, spec = make_vector_env(hp.env, 1, 0, env_kwargs=hp.env_kwargs)
    env.close()
    agent = build_agent(hp, spec, 0)
    rng = np.random.default_rng(0)
    n = spec.num_actions
    minibatch = {
        "obs": tf.constant(atari_frames(rng, batch, spec.obs_shape)),
        "action": tf.constant(rng.integers(0, n, batch), tf.int64),
        "old_log_prob": tf.fill([batch], float(np.log(1.0 / n))),
        "old_value": tf.constant(rng.normal(size=batch), tf.float32),
        "advantage": tf.constant(rng.normal(size=batch), tf.float32),
        "return": tf.constant(rng.normal(size=batch), tf.float32),
        "mask": tf.ones([batch]),
    }

    def update(minibatch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        loss, grad_norm, aux = agent.minibatch_step(minibatch)
        return {"loss": loss, "grad_norm": grad_norm, **aux}

    yield Program(
        name=f"ppo_atari_minibatch_{precision}",
        about=f"ppo_breakout (Nature CNN) PPO minibatch update, batch {batch}, {precision}",
        function=tf.function(update, jit_compile=True),
        args=(minibatch,),
        unit="gradient steps",
        per_call=1,
        compute="bfloat16" if "bfloat16" in precision else "float32",
    )


def programs(profile: str) -> list[tuple[str, Callable[[], Iterator[Program]]]]:
    """[(name, builder)] in export order; a builder yields one program or several (population:
    the iteration, then the PBT step of the same members)."""
    sizes = PROFILES[profile]
    builders: list[tuple[str, Callable[[], Iterator[Program]]]] = [
        (f"ppo_cartpole_{n}env", lambda n=n: compiled_ppo(n)) for n in sizes.ppo_envs
    ]
    builders.append((f"population_{sizes.population}", lambda: population(sizes.population)))
    for name in ("dqn_cartpole", "sac_pendulum"):
        builders.append(
            (
                f"{name.split('_')[0]}_learner",
                lambda name=name: learner(name, sizes.learner_batch, sizes.learner_steps),
            )
        )
    for precision in ("float32", "mixed_bfloat16"):
        builders.append(
            (
                f"ppo_atari_minibatch_{precision}",
                lambda p=precision: cnn_minibatch(p, sizes.cnn_batch),
            )
        )
    return builders
