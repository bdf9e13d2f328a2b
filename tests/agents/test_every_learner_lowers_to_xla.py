"""Every agent's learner update lowers to XLA, as `jit_compile=auto` builds it on CPU for
non-convolutional models and on every GPU/TPU.

The `*_tiny` sets keep the learner on TF's kernels (rl/hparams/common.py, `smoke_test_settings`):
XLA-compiling a tiny learner costs more than its whole run, and the test tier builds each set
many times. What XLA can refuse is refused here, once per agent: an op without an XLA kernel, a
shape XLA cannot make static, a Python side effect in the traced update. Lowering to HLO runs
TensorFlow's bridge to XLA (the part that fails on such code) without compiling machine code;
tests/utils/test_compiler.py and tests/compiled/ run XLA-compiled learners end to end.
"""

from __future__ import annotations

import pytest
import tensorflow as tf
from conftest import repository_agents

from rl import registry
from rl.agents.build import build_agent
from rl.envs import make_vector_env

# Agents without a gradient learner: nothing is XLA-compiled for them.
NO_LEARNER = {"cmaes": "evolution strategy: the update is NumPy, outside TensorFlow"}
# Agents whose class another agent's case covers.
SAME_CLASS = {"ddpg": "td3"}


def _env(hp):
    return make_vector_env(
        hp.env, hp.num_envs, 0, env_kwargs=hp.env_kwargs, max_episode_steps=hp.max_episode_steps
    )


def test_every_agent_is_covered_or_excluded_for_a_reason():
    for name, other in SAME_CLASS.items():
        assert registry.get_agent(name) is registry.get_agent(other)
    assert set(NO_LEARNER) | set(SAME_CLASS) <= set(repository_agents())


@pytest.mark.parametrize(
    "agent_name",
    [name for name in repository_agents() if name not in NO_LEARNER and name not in SAME_CLASS],
)
def test_the_learner_update_lowers_to_xla(agent_name):
    hp = registry.get_hparams(f"{agent_name}_tiny")()
    hp.override("jit_compile=true")
    hp.freeze()
    env, spec = _env(hp)
    try:
        agent = build_agent(hp, spec, 0)
        update = agent.train_on_batch
        # Zeros of the update's input signature, 2 where a size is left open (replay batches).
        batch = tf.nest.map_structure(
            lambda s: tf.zeros([2 if d is None else d for d in s.shape], s.dtype),
            update.input_signature,
        )
        hlo = update.experimental_get_compiler_ir(*batch)(stage="hlo")
    finally:
        env.close()
    assert "ENTRY" in hlo  # a whole HLO module: every op of the update has an XLA lowering


def test_agents_without_a_learner_have_no_update_to_compile():
    for name in NO_LEARNER:
        hp = registry.get_hparams(f"{name}_tiny")()
        hp.freeze()
        env, spec = _env(hp)
        try:
            assert getattr(build_agent(hp, spec, 0), "train_on_batch", None) is None
        finally:
            env.close()
