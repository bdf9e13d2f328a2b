"""Schedules: hand-computed values in Python and inside one `tf.function` trace."""

import math

import pytest
import tensorflow as tf

from rl import registry
from rl.errors import UserError
from rl.hparams import Schedule, as_schedule, parse_schedule
from rl.hparams.schedules import Constant, Cosine, Exponential, Linear, Piecewise

# (schedule text, [(step, expected value)]); every expected value is computed by hand.
CASES = [
    ("constant(0.1)", [(0, 0.1), (10**9, 0.1)]),
    # 1.0 -> 0.05 over 10000 steps: halfway is 1.0 - 0.95 / 2 = 0.525; clamped after the end.
    ("linear(1.0, 0.05, 10000)", [(0, 1.0), (5000, 0.525), (10000, 0.05), (20000, 0.05)]),
    # held at 1.0 until step 100, then 1.0 -> 0.0 over 100 steps.
    (
        "linear(1.0, 0.0, 100, begin=100)",
        [(0, 1.0), (100, 1.0), (150, 0.5), (175, 0.25), (200, 0.0), (2**40, 0.0)],
    ),
    # 1.0 * 0.5 ** (step / 100): 0.5 ** 0.5 = 0.70710678 at step 50.
    ("exponential(1.0, 0.5, 100)", [(0, 1.0), (50, 0.70710678), (100, 0.5), (200, 0.25)]),
    # the same with a floor of 0.3: 0.25 at step 200 is floored.
    ("exponential(1.0, 0.5, 100, minimum=0.3)", [(100, 0.5), (200, 0.3), (10**6, 0.3)]),
    # values[0] before 10, values[1] on [10, 20), values[2] from 20 on.
    (
        "piecewise([10, 20], [1.0, 0.5, 0.1])",
        [(0, 1.0), (9, 1.0), (10, 0.5), (19, 0.5), (20, 0.1), (10**12, 0.1)],
    ),
    ("piecewise([], [0.7])", [(0, 0.7), (99, 0.7)]),
    # 0.5 * (1 + cos(pi * t / 100)): t=25 -> 0.5 * (1 + 0.70710678) = 0.85355339.
    # clamped after the end (unclamped, step 150 would give 0.5 * (1 + cos(1.5 pi)) = 0.5).
    ("cosine(1.0, 0.0, 100)", [(0, 1.0), (25, 0.85355339), (50, 0.5), (100, 0.0), (150, 0.0)]),
    # 0.01 + 0.09 * 0.5 at the midpoint = 0.055.
    ("cosine(0.1, 0.01, 100)", [(50, 0.055), (100, 0.01)]),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_values_in_python(text, expected):
    schedule = parse_schedule(text)
    for step, value in expected:
        assert schedule.value(step) == pytest.approx(value, rel=1e-6, abs=1e-7), step


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_values_in_one_tf_function_trace_with_a_variable_step(text, expected):
    schedule = parse_schedule(text)
    step = tf.Variable(0, dtype=tf.int64)
    traces = []

    @tf.function
    def current_value():
        traces.append(1)  # Python side effect: runs once per trace
        return schedule(step)

    for s, value in expected:
        step.assign(s)
        result = current_value()
        assert result.dtype == tf.float32
        assert float(result) == pytest.approx(value, rel=1e-6, abs=1e-7), s
    assert len(traces) == 1


def test_step_tensor_argument_does_not_retrace():
    schedule = parse_schedule("linear(1.0, 0.0, 10)")
    traces = []

    @tf.function
    def at(step):
        traces.append(1)
        return schedule(step)

    values = [float(at(tf.constant(s, tf.int64))) for s in (0, 5, 10)]
    assert values == pytest.approx([1.0, 0.5, 0.0])
    assert len(traces) == 1


def test_int32_step_is_accepted():
    assert float(parse_schedule("linear(2.0, 0.0, 4)")(tf.constant(1, tf.int32))) == 1.5


def test_keras_optimizer_learning_rate_follows_a_schedule():
    schedule = parse_schedule("linear(0.1, 0.01, 10)")
    opt = tf.keras.optimizers.Adam(learning_rate=0.5)
    weight = tf.Variable(1.0)
    step = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def train_step():
        opt.learning_rate.assign(schedule(step))
        opt.apply_gradients([(tf.constant(1.0), weight)])

    train_step()
    assert float(opt.learning_rate.numpy()) == pytest.approx(0.1)
    # With a constant gradient Adam's bias-corrected step is lr * g / |g| = lr (up to epsilon).
    assert float(weight.numpy()) == pytest.approx(1.0 - 0.1, abs=1e-5)
    step.assign(5)  # halfway: 0.1 * 0.5 + 0.01 * 0.5 = 0.055
    train_step()
    assert float(opt.learning_rate.numpy()) == pytest.approx(0.055)
    assert float(weight.numpy()) == pytest.approx(1.0 - 0.1 - 0.055, abs=1e-5)


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("constant(1)", "constant(1.0)"),
        ("linear(1, 0.05, 10_000)", "linear(1.0, 0.05, 10000)"),
        ("linear(1.0, 0.05, 10000, begin=0)", "linear(1.0, 0.05, 10000)"),
        ("linear(1.0, 0.05, 10000, 7)", "linear(1.0, 0.05, 10000, begin=7)"),
        (
            "exponential(1e-3, 0.5, 100, minimum=1e-5)",
            "exponential(0.001, 0.5, 100, minimum=1e-05)",
        ),
        ("piecewise((10, 20), (1, 0.5, 0.1))", "piecewise([10, 20], [1.0, 0.5, 0.1])"),
        ("cosine(3e-4, 0, 1000)", "cosine(0.0003, 0.0, 1000)"),
    ],
)
def test_spec_is_canonical_and_round_trips(text, spec):
    schedule = parse_schedule(text)
    assert schedule.spec() == spec
    assert parse_schedule(spec) == schedule
    assert hash(parse_schedule(spec)) == hash(schedule)
    assert repr(schedule) == spec


def test_equality_is_by_spec():
    assert Linear(1.0, 0.0, 10) == Linear(1, 0, 10)
    assert Linear(1.0, 0.0, 10) != Linear(1.0, 0.0, 11)
    assert Constant(0.5) != 0.5
    assert len({Constant(1), Constant(1.0), Cosine(1.0, 0.0, 5)}) == 2


def test_registered_by_explicit_name():
    assert registry.schedules.get("constant") is Constant
    assert registry.schedules.get("linear") is Linear
    assert registry.schedules.get("exponential") is Exponential
    assert registry.schedules.get("piecewise") is Piecewise
    assert registry.schedules.get("cosine") is Cosine


def test_as_schedule():
    assert as_schedule(0.1) == Constant(0.1)
    assert as_schedule(2) == Constant(2.0)
    linear = Linear(1.0, 0.0, 10)
    assert as_schedule(linear) is linear
    assert as_schedule("linear(1, 0, 10)") == linear
    assert as_schedule("0.25") == Constant(0.25)
    with pytest.raises(UserError, match="not a schedule: True"):
        as_schedule(True)
    with pytest.raises(UserError, match="not a schedule: 'soon'"):
        as_schedule("soon")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("constant('a')", "constant: value must be a number, got 'a'"),
        ("constant(True)", "constant: value must be a number, got True"),
        ("linear(1.0, 0.0, 0)", "linear: steps must be >= 1, got 0"),
        ("linear(1.0, 0.0, 1e4)", "linear: steps must be an int, got 10000.0"),
        ("linear(1.0, 0.0, steps)", "linear: steps must be an int, got 'steps'"),
        ("linear(1.0, 0.0, 10, begin=-1)", "linear: begin must be >= 0, got -1"),
        ("exponential(1.0, 0.0, 10)", "exponential: decay_rate must be > 0, got 0.0"),
        ("exponential(1.0, 0.5, 0)", "exponential: decay_steps must be >= 1, got 0"),
        (
            "piecewise([10], [1.0])",
            "piecewise: values needs len(boundaries) + 1 = 2 entries, got 1",
        ),
        ("piecewise([20, 10], [1, 2, 3])", "piecewise: boundaries must increase strictly"),
        ("piecewise([10, 10], [1, 2, 3])", "piecewise: boundaries must increase strictly"),
        ("piecewise([1.5], [1, 2])", "piecewise: boundaries[0] must be an int, got 1.5"),
        ("piecewise(10, [1, 2])", "piecewise: boundaries must be a list, got 10"),
        ("cosine(1.0, 0.0, -5)", "cosine: steps must be >= 1, got -5"),
        ("foo", "not a schedule: 'foo'"),
        ("true", "not a schedule: 'true'"),
    ],
)
def test_bad_arguments_name_schedule_and_argument(text, message):
    with pytest.raises(UserError) as e:
        parse_schedule(text)
    assert message in str(e.value)


def test_value_is_python_float():
    value = Cosine(1.0, 0.0, 4).value(2)
    assert type(value) is float
    assert value == pytest.approx(0.5 * (1 + math.cos(math.pi / 2)))


def test_schedule_base_is_abstract():
    with pytest.raises(NotImplementedError):
        Schedule()(0)
