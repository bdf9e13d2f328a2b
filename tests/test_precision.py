"""The `precision` hparam: every agent family trains, resumes bit for bit and exports under
mixed_bfloat16 (torsos in bfloat16, variables and outputs float32); float16's loss scaling
keeps gradients that float16 would flush to zero; what cannot run refuses with one line."""

import numpy as np
import pytest
import tensorflow as tf
from test_learning import train_and_read_state
from test_resume_every_agent import final_checkpoint

import rl  # noqa: F401  (fills the registries)
import train
from rl import registry
from rl.agents.optimizers import loss_scale, make_optimizer
from rl.envs import make_vector_env
from rl.export import export_run
from rl.export.policy_module import GREEDY
from rl.models import ActorCritic
from rl.models.precision import compute_in
from rl.models.recurrent import RecurrentCore

TRAINED_SET = None  # trained_run.start only: this module reads no shared run

BF16 = "precision=mixed_bfloat16"
LOW_TYPES = (np.float16, tf.bfloat16.as_numpy_dtype)  # what no variable may be saved as
# One tiny set per family. The default tier runs a replay agent here (~12 s of CPU) and PPO under
# a strategy below (test_a_strategy_trains_in_mixed_bfloat16); the other families share their
# code paths (replay, rollouts, off-policy actor-critics) and run with -m slow. The recurrent
# core's bfloat16 compute is checked layer by layer below (test_heads_and_state_stay_float32_...);
# its whole run (~40 s here, ~60 s where bfloat16 is emulated) is in the slow tier.
DEFAULT_TIER = ("dqn_tiny",)
SLOW_TIER = (
    "ppo_tiny",
    "ppo_recurrent_tiny",
    "sac_tiny",
    "c51_tiny",
    "qrdqn_tiny",
    "drqn_tiny",
    "a2c_tiny",
    "reinforce_tiny",
    "impala_tiny",
    "offpac_tiny",
    "td3_tiny",
    "maddpg_tiny",
    "dqn_tf_tiny",
    "ppo_tf_tiny",
)


def matmuls_in(function, dtype: tf.DType) -> int:
    """MatMul ops on `dtype` operands in a concrete function's graph and its library."""
    graph = function.graph.as_graph_def()
    nodes = [*graph.node, *(n for f in graph.library.function for n in f.node_def)]
    enum = dtype.as_datatype_enum
    return sum(n.op in ("MatMul", "BatchMatMulV2") and n.attr["T"].type == enum for n in nodes)


# Export builds the agent on one env copy, which IMPALA's default minibatch split (2 of the
# unroll's env copies) refuses, whatever the precision: one minibatch here.
EXTRA_OVERRIDES = {"impala_tiny": ",num_minibatches=1"}
# mixed_float16 adds the loss-scale optimizer's state to checkpoints: one or several optimizers.
FLOAT16_CASES = (("dqn_tiny", "mixed_float16"), ("sac_tiny", "mixed_float16"))


@pytest.mark.parametrize(
    "tiny_set, precision",
    [
        *((s, "mixed_bfloat16") for s in DEFAULT_TIER),
        *(pytest.param(s, "mixed_bfloat16", marks=pytest.mark.slow) for s in SLOW_TIER),
        *(pytest.param(*case, marks=pytest.mark.slow) for case in FLOAT16_CASES),
    ],
)
def test_trains_resumes_bit_exactly_and_exports_in_low_precision(
    tmp_path, trained_run, capsys, tiny_set, precision
):
    hp = registry.get_hparams(tiny_set)()
    iteration = max(1, hp.train_every // hp.num_envs) * hp.num_envs
    every = 2 * iteration  # the checkpoint the split run stops and resumes at
    override = (
        f"precision={precision},checkpoint_every={every},eval.every_steps={every},"
        f"train_every={iteration}{EXTRA_OVERRIDES.get(tiny_set, '')}"
    )
    if "learning_starts" in hp:  # replay warm-up: one iteration, so both halves learn
        override += f",learning_starts={iteration}"
    base = ["--hparams", tiny_set, "--hparam_override", override]
    straight, split = tmp_path / "straight", tmp_path / "split"
    straight_run = trained_run.start([*base, "--output_dir", straight, "--train_steps", 2 * every])
    assert train.main([*base, "--output_dir", str(split), "--train_steps", str(every)]) == 0
    capsys.readouterr()
    assert train.main([*base, "--output_dir", str(split), "--train_steps", str(2 * every)]) == 0
    assert f"resuming from checkpoint at {every}" in capsys.readouterr().out
    proc = straight_run.result()
    assert proc.returncode == 0, proc.stderr[-2000:]
    step_a, vars_a, arrays_a = final_checkpoint(straight)
    step_b, vars_b, arrays_b = final_checkpoint(split)
    assert step_a == step_b == 2 * every
    assert vars_a.keys() == vars_b.keys() and arrays_a.keys() == arrays_b.keys()
    for key in vars_a:
        np.testing.assert_array_equal(vars_a[key], vars_b[key], err_msg=key)
        assert vars_a[key].dtype not in LOW_TYPES, key
    for key in arrays_a:
        np.testing.assert_array_equal(arrays_a[key], arrays_b[key], err_msg=key)
    if hp.env.startswith("tf/"):
        return  # export refuses compiled runs (a seed stack), whatever their precision
    greedy = tf.saved_model.load(export_run(str(split / "run_0")).path).signatures[GREEDY]
    low_type = tf.float16 if precision == "mixed_float16" else tf.bfloat16
    assert matmuls_in(greedy, low_type) > 0, f"the exported torso does not compute in {low_type}"
    for name, spec in greedy.structured_outputs.items():
        assert not spec.dtype.is_floating or spec.dtype == tf.float32, name


def test_a_strategy_trains_in_mixed_bfloat16(tmp_path, train_here):
    # One replica (a 1-CPU MirroredStrategy): the replicated gradient step, its all-reduce and
    # the checkpoint under a strategy scope, with bfloat16 torsos.
    out = tmp_path / "run"
    args = ["--hparams", "ppo_tiny", "--hparam_override", BF16, "--train_steps", 128]
    proc = train_here([*args, "--strategy", "mirrored", "--output_dir", out])
    assert proc.returncode == 0, proc.stderr[-2000:]
    step, variables, _ = final_checkpoint(out)
    assert step == 128
    assert any(v.dtype == np.float32 for v in variables.values())
    assert not [k for k, v in variables.items() if v.dtype in LOW_TYPES], "low-type variables"


def test_mixed_float16_checkpoints_every_optimizers_loss_scale(tmp_path):
    hp = registry.get_hparams("sac_tiny")()
    hp.precision = "mixed_float16"
    hp.freeze()
    env, spec = make_vector_env(hp.env, 1, seed=0)
    env.close()
    agent = registry.get_agent(hp.agent)(spec, hp, seed=0)
    optimizers = [agent.learner.optimizer, agent.actor_optimizer, agent.alpha_optimizer]
    assert all(isinstance(o, tf.keras.optimizers.LossScaleOptimizer) for o in optimizers)
    saved = tf.train.Checkpoint(agent=agent).write(str(tmp_path / "ckpt"))
    names = [name for name, _ in tf.train.list_variables(saved)]
    assert sum(name.endswith("dynamic_scale/.ATTRIBUTES/VARIABLE_VALUE") for name in names) == 3


def test_heads_and_state_stay_float32_while_the_torso_and_core_compute_in_bfloat16():
    env, spec = make_vector_env("CartPole-v1", 1, seed=0)
    env.close()
    model = ActorCritic(spec, "auto", [8], "relu")
    core = RecurrentCore("lstm", 8)
    obs = tf.ones([3, 4])
    model(obs), core(tf.ones([3, 4]), tf.zeros([3, 16]))
    compute_in("mixed_bfloat16", [model, core])
    assert model.torso.body.layers[-1].compute_dtype == "bfloat16"
    assert model.policy_head.compute_dtype == model.value_head.compute_dtype == "float32"
    logits, value = model(obs)
    output, state = core(tf.ones([3, 4]), tf.zeros([3, 16]))
    assert (logits.dtype, value.dtype, state.dtype) == (tf.float32,) * 3
    assert output.dtype == tf.bfloat16
    # (int64: the LSTM cell's dropout seed)
    assert {str(v.dtype) for v in model.variables + core.variables} == {"float32", "int64"}


def test_loss_scaling_keeps_a_gradient_that_float16_flushes_to_zero():
    # d loss / d kernel = 1e-8 * x: below float16's smallest subnormal (2^-24 ~ 6e-8), so the
    # backward pass through a float16 Dense rounds it to exactly 0; scaled by 2^15 it is 3e-4,
    # and unscaled again in float32 it is the float32 model's gradient.
    x = tf.constant([[1.0, 2.0]])

    def model(precision: str) -> tf.keras.Sequential:
        tf.keras.utils.set_random_seed(0)
        net = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer="ones")])
        net(x)
        compute_in(precision, [net])
        return net

    def step(precision: str, optimizer) -> np.ndarray:
        net = model(precision)
        optimizer.build(net.trainable_variables)
        scale = loss_scale(optimizer)
        with tf.GradientTape() as tape:
            loss = 1e-8 * tf.reduce_sum(tf.cast(net(x), tf.float32))
            scaled = loss if scale is None else loss * scale
        grads = tape.gradient(scaled, net.trainable_variables)
        before = net.trainable_variables[0].numpy()
        optimizer.apply_gradients(zip(grads, net.trainable_variables, strict=True))
        return before - net.trainable_variables[0].numpy()  # = lr * gradient for SGD

    lr = 1e6  # makes the 1e-8 gradient a visible change of the float32 kernel
    reference = step("float32", make_optimizer("sgd", lr, 1e-7))
    np.testing.assert_allclose(reference, [[1e-2], [2e-2]], rtol=1e-5)
    unscaled = step("mixed_float16", make_optimizer("sgd", lr, 1e-7))
    assert np.all(unscaled == 0.0), unscaled
    scaled_optimizer = make_optimizer("sgd", lr, 1e-7, "mixed_float16")
    assert isinstance(scaled_optimizer, tf.keras.optimizers.LossScaleOptimizer)
    np.testing.assert_allclose(step("mixed_float16", scaled_optimizer), reference, rtol=1e-3)


@pytest.mark.parametrize(
    "tiny_set, override, says",
    [
        ("cmaes_tiny", BF16, "agent 'cmaes': CMA-ES has no network layers"),
        ("dqn_tf_tiny", "precision=mixed_float16", "precision=mixed_float16 needs loss scaling"),
        ("dqn_tiny", "precision=bfloat16", "unknown precision 'bfloat16'"),
    ],
)
def test_what_cannot_run_exits_2_with_one_line_before_writing(
    tmp_path, train_here, tiny_set, override, says
):
    out = tmp_path / "run"
    args = ["--hparams", tiny_set, "--hparam_override", override, "--output_dir", out]
    proc = train_here(args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))


@pytest.mark.slow
@pytest.mark.parametrize("hparams_set", ["dqn_cartpole", "ppo_cartpole"])
def test_cartpole_seed0_reaches_475_in_mixed_bfloat16(tmp_path, hparams_set):
    state = train_and_read_state(tmp_path, hparams_set, 0, f"{BF16},stop_at_eval_return=475.0")
    assert state["first_step_at_threshold"] is not None, state
    assert state["last_eval_return"] >= 475.0
