"""`jit_compile` resolution (rl/utils/compiler.py): explicit values win, `auto` follows the
measured rule (docs/benchmarks.md), and agents build their functions with the choice."""

from __future__ import annotations

import pytest

from rl import registry
from rl.agents.build import build_agent
from rl.envs import make_vector_env
from rl.utils.compiler import choose_compiler, is_convolutional, whole_program_xla


@pytest.mark.parametrize(
    "setting, convolutional, device, learner, acting",
    [
        ("auto", True, "CPU", False, False),  # XLA:CPU convolutions are the slow ones
        ("auto", False, "CPU", True, False),
        ("auto", True, "GPU", True, True),
        ("auto", False, "TPU", True, True),
        (True, True, "CPU", True, False),  # explicit values win (acting as before: TF kernels)
        (False, False, "GPU", False, False),
    ],
)
def test_choose_compiler(setting, convolutional, device, learner, acting):
    choice = choose_compiler(setting, convolutional=convolutional, device=device)
    assert (choice.learner, choice.acting) == (learner, acting)
    assert ("auto" in choice.reason) == (setting == "auto")


def built_with_xla(function) -> bool:
    """Whether a tf.function (with an input signature) was made with jit_compile=True: TF marks
    its graph `_XlaMustCompile`, which the public FunctionDef shows (traced, never run)."""
    attrs = function.get_concrete_function().function_def.attr
    return "_XlaMustCompile" in attrs and attrs["_XlaMustCompile"].b


def test_convolutional_models_and_the_compiled_path():
    assert is_convolutional("auto", (84, 84, 4)) and is_convolutional("cnn", (84, 84, 4))
    assert not is_convolutional("auto", (4,)) and not is_convolutional("mlp", (8,))
    assert whole_program_xla("auto") and whole_program_xla(True)
    assert not whole_program_xla(False)
    with pytest.raises(ValueError, match="jit_compile must be"):
        choose_compiler("sometimes", convolutional=False, device="CPU")


@pytest.mark.parametrize(
    "hparams_set, override, learner_xla",
    [
        ("ppo_atari_tiny", "jit_compile=auto", False),  # Nature CNN on CPU
        ("ppo_atari_tiny", "jit_compile=true", True),
        ("dqn_tiny", "jit_compile=auto", True),  # MLP on CPU
        ("dqn_tiny", "jit_compile=false", False),
    ],
)
def test_agents_build_their_learner_with_the_resolved_choice(hparams_set, override, learner_xla):
    hp = registry.get_hparams(hparams_set)()
    hp.override(override)
    hp.freeze()
    env, spec = make_vector_env(hp.env, hp.num_envs, 0, env_kwargs=hp.env_kwargs)
    agent = build_agent(hp, spec, 0)
    assert agent.compiler.learner is learner_xla
    assert built_with_xla(agent.train_on_batch) is learner_xla  # what the learner is built with
    assert agent.metrics()["compiler/learner_xla"] == float(learner_xla)
    env.close()


def test_xla_acting_runs_in_the_collect_loop_and_evaluation(monkeypatch):
    # What `auto` picks on a GPU/TPU, exercised on CPU: acting as a nested XLA function inside
    # the driver's loop (which steps Python envs) and an XLA-compiled greedy function.
    import numpy as np

    import rl.utils.compiler
    from rl.rollout.driver import Driver

    monkeypatch.setattr(rl.utils.compiler, "device_type", lambda: "GPU")
    hp = registry.get_hparams("dqn_tiny")()
    hp.override("jit_compile=auto")  # the tiny sets fix it to false
    hp.freeze()
    env, spec = make_vector_env(hp.env, hp.num_envs, 0, env_kwargs=hp.env_kwargs)
    agent = build_agent(hp, spec, 0)
    assert agent.compiler.acting and built_with_xla(agent.greedy_function)
    driver = Driver(env, spec, agent)
    driver.reset(0)
    driver.collect(16)
    assert int(agent.env_steps.numpy()) == 16 * hp.num_envs
    assert agent.compiled_act_with_info.experimental_get_tracing_count() == 1
    actions = agent.greedy_actions(env.reset(seed=0)[0])
    assert actions.shape == (hp.num_envs,) and np.all((0 <= actions) & (actions < spec.num_actions))
    env.close()
