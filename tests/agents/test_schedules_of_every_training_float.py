"""Every float an agent reads while it trains follows a schedule of the step (issue 15, part 3).

One test per key, by hand: the set gets `piecewise([3], [A, B])` (A before gradient step 3, B
from it on), the agent trains once at gradient step 0 and once past step 3, and the function
that consumes the key is seen to receive A, then B. The update runs eagerly
(`run_functions_eagerly`) so that the numbers those functions receive can be read; their maths
has its own hand-computed tests beside each agent. `target_kl` and `max_grad_norm` are checked
by their effect instead (the steps an update takes, the size of an SGD step).
"""

from __future__ import annotations

import contextlib
import inspect

import numpy as np
import pytest
import tensorflow as tf
from test_policy_gradient import make_agent

import rl  # noqa: F401
import rl.agents.drqn
import rl.agents.offpac
import rl.agents.ppo
import rl.agents.sac
from rl import registry
from rl.errors import UserError

A, B = 0.75, 0.25
SCHEDULE = f"piecewise([3], [{A}, {B}])"


@contextlib.contextmanager
def eagerly():
    """The agent's tf.functions run as Python inside (the Driver's collect loop cannot)."""
    tf.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        tf.config.run_functions_eagerly(False)


def recording(function, names: tuple[str, ...], seen: list[dict]):
    """`function`, noting the numbers its arguments `names` had at each call (None stays)."""
    signature = inspect.signature(function)

    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        seen.append({name: _number(bound.arguments[name]) for name in names})
        return function(*args, **kwargs)

    return wrapper


def _number(value) -> float | None:
    return None if value is None else float(np.asarray(value))


def train_at(agent, driver, gradient_step: int, steps: int) -> dict:
    """Collects `steps` env steps and updates once, the gradient step counter at `gradient_step`
    when the update starts."""
    driver.collect(steps)
    agent.learner.gradient_steps.assign(gradient_step)
    with eagerly():
        return agent.update()


def values_at_0_and_10(agent, driver, seen, steps, key=None):
    """The recorded numbers of the first call of an update at gradient step 0, then 10."""
    out = []
    for start in (0, 10):
        seen.clear()
        assert train_at(agent, driver, start, steps)  # an update ran
        out.append(seen[0] if key is None else seen[0][key])
    return out


def test_gae_lambda():
    agent, driver = make_agent("ppo_tiny", f"gae_lambda={SCHEDULE}")
    seen: list[dict] = []
    agent.estimator = recording(agent.estimator, ("lambda_",), seen)
    assert values_at_0_and_10(agent, driver, seen, agent.steps_per_iteration, "lambda_") == [A, B]


def test_gae_lambda_of_recurrent_ppo():
    agent, driver = make_agent("ppo_recurrent_tiny", f"gae_lambda={SCHEDULE}")
    seen: list[dict] = []
    agent.estimator = recording(agent.estimator, ("lambda_",), seen)
    assert values_at_0_and_10(agent, driver, seen, agent.steps_per_iteration, "lambda_") == [A, B]


def test_vtrace_lambda_rho_bar_and_c_bar():
    agent, driver = make_agent(
        "impala_tiny",
        f"vtrace_lambda={SCHEDULE},vtrace_rho_bar=piecewise([3], [2.0, 1.5]),"
        "vtrace_c_bar=piecewise([3], [3.0, 0.5])",
    )
    seen: list[dict] = []
    agent.estimator = recording(agent.estimator, ("lambda_", "rho_bar", "c_bar"), seen)
    first, later = values_at_0_and_10(agent, driver, seen, agent.steps_per_iteration)
    assert first == {"lambda_": A, "rho_bar": 2.0, "c_bar": 3.0}
    assert later == {"lambda_": B, "rho_bar": 1.5, "c_bar": 0.5}


def test_offpac_trace_lambda_rho_bar_and_c_bar(monkeypatch):
    agent, driver = make_agent(
        "offpac_tiny",
        f"trace_lambda={SCHEDULE},rho_bar=piecewise([3], [2.0, 1.5]),c_bar=None,"
        "learning_starts=0,gradient_steps=1",
    )
    targets: list[dict] = []
    actor: list[dict] = []
    monkeypatch.setattr(
        rl.agents.offpac,
        "offpac_critic_targets",
        recording(rl.agents.offpac.offpac_critic_targets, ("lambda_", "rho_bar", "c_bar"), targets),
    )
    monkeypatch.setattr(
        rl.agents.offpac,
        "offpac_actor_loss",
        recording(rl.agents.offpac.offpac_actor_loss, ("rho_bar",), actor),
    )
    first, later = values_at_0_and_10(agent, driver, targets, agent.steps_per_iteration)
    assert first == {"lambda_": A, "rho_bar": 2.0, "c_bar": None}  # None: untruncated
    assert later == {"lambda_": B, "rho_bar": 1.5, "c_bar": None}
    assert actor[-1] == {"rho_bar": 1.5}  # the actor's truncation reads the same schedule


def test_drqn_priority_eta(monkeypatch):
    agent, driver = make_agent(
        "drqn_tiny",
        f"priority_eta={SCHEDULE},memory=prioritized,learning_starts=0,gradient_steps=1",
    )
    seen: list[dict] = []
    monkeypatch.setattr(
        rl.agents.drqn,
        "sequence_priority",
        recording(rl.agents.drqn.sequence_priority, ("eta",), seen),
    )
    steps = 4 * agent.hparams.train_every  # enough whole sequences to sample a batch
    assert values_at_0_and_10(agent, driver, seen, steps, "eta") == [A, B]


def test_sac_target_entropy(monkeypatch):
    agent, driver = make_agent(
        "sac_tiny", "target_entropy=piecewise([3], [-2.0, -0.5]),learning_starts=0,gradient_steps=1"
    )
    seen: list[dict] = []
    monkeypatch.setattr(
        rl.agents.sac,
        "sac_alpha_loss",
        recording(rl.agents.sac.sac_alpha_loss, ("target_entropy",), seen),
    )
    steps = agent.hparams.batch_size
    assert values_at_0_and_10(agent, driver, seen, steps, "target_entropy") == [-2.0, -0.5]


def test_sac_without_target_entropy_aims_for_minus_the_action_dimensions(monkeypatch):
    agent, driver = make_agent("sac_tiny", "learning_starts=0,gradient_steps=1")
    seen: list[dict] = []
    monkeypatch.setattr(
        rl.agents.sac,
        "sac_alpha_loss",
        recording(rl.agents.sac.sac_alpha_loss, ("target_entropy",), seen),
    )
    assert train_at(agent, driver, 0, agent.hparams.batch_size)
    assert seen[0] == {"target_entropy": -1.0}  # Pendulum: one action dimension


def test_ppo_clip_range_vf(monkeypatch):
    agent, driver = make_agent("ppo_tiny", f"clip_range_vf={SCHEDULE}")
    seen: list[dict] = []
    monkeypatch.setattr(
        rl.agents.ppo, "value_loss", recording(rl.agents.ppo.value_loss, ("clip_range",), seen)
    )
    values = values_at_0_and_10(agent, driver, seen, agent.steps_per_iteration, "clip_range")
    assert values == [A, B]


def register_recording(request, functions, name: str, arg: str, seen: list[dict]) -> str:
    """Registers (for this test only) a recording twin of registered function `name` under
    `recording_<name>`, with the same role, so a set can name it; returns that name."""
    twin = f"recording_{name}"
    functions.register(
        twin, recording(functions.get(name), (arg,), seen), role=functions.role(name)
    )
    request.addfinalizer(lambda: functions.unregister(twin))
    return twin


def test_td3_ou_theta_follows_the_env_step(request):
    # ou_theta is exploration: a schedule of the env step, read as each action is chosen.
    seen: list[dict] = []
    register_recording(request, registry.action_functions, "ornstein_uhlenbeck", "theta", seen)
    agent, _ = make_agent(
        "td3_tiny",
        "action_function=recording_ornstein_uhlenbeck,ou_theta=piecewise([100], [0.5, 0.125]),"
        "learning_starts=0",
    )
    obs = tf.zeros([agent.spec.num_envs, *agent.spec.obs_shape])
    with eagerly():
        agent.act(obs, explore=True)
        assert seen[-1] == {"theta": 0.5}
        agent.env_steps.assign(100)
        agent.act(obs, explore=True)
        assert seen[-1] == {"theta": 0.125}


def test_qrdqn_kappa(request):
    seen: list[dict] = []
    register_recording(request, registry.gradient_functions, "quantile_huber_loss", "kappa", seen)
    agent, driver = make_agent(
        "qrdqn_tiny",
        "loss=recording_quantile_huber_loss,kappa=piecewise([3], [2.0, 0.5]),learning_starts=0,"
        "gradient_steps=1,train_every=1",
    )
    steps = agent.hparams.batch_size + agent.hparams.n_step  # n-step rows lag n - 1 steps
    assert values_at_0_and_10(agent, driver, seen, steps, "kappa") == [2.0, 0.5]


def test_qrdqn_kappa_schedule_reaching_zero_is_refused():
    with pytest.raises(UserError, match=r"kappa must be > 0 .* at every step, got linear"):
        make_agent("qrdqn_tiny", "kappa=linear(1.0, 0.0, 100)")


def test_ppo_target_kl_schedule_stops_where_the_step_has_it():
    # 4 gradient steps per update (2 minibatches x 2 epochs). target_kl 1000 for gradient steps
    # 0 and 1 (no stop), 1e-5 from step 2: the check before the third step stops the update,
    # since one Adam step at lr 1e-2 moves the policy by far more than 1.5e-5 in KL.
    agent, driver = make_agent("ppo_tiny", "lr=1e-2,target_kl=piecewise([2], [1000.0, 1e-5])")
    driver.collect(agent.steps_per_iteration)
    assert agent.update()["train/update_steps"] == 2.0
    driver.collect(agent.steps_per_iteration)  # from step 2 on: one step, then the stop
    assert agent.update()["train/update_steps"] == 1.0


def test_max_grad_norm_schedule_clips_where_it_is_positive():
    # SGD at lr 1: a step moves the weights by exactly the (clipped) gradient. max_grad_norm
    # 1e-3 for gradient step 0 (the step's global norm is then 1e-3), 0 from step 1 (no
    # clipping: the step's norm is the gradient norm the update reports).
    agent, driver = make_agent(
        "dqn_tiny",
        "optimizer=sgd,lr=1.0,max_grad_norm=piecewise([1], [1e-3, 0.0]),learning_starts=0,"
        "gradient_steps=1,train_every=1,target_update_period=1000",
    )
    driver.collect(agent.hparams.batch_size + agent.hparams.n_step)  # n-step rows lag n - 1
    for step in range(2):
        before = [v.numpy() for v in agent.q_network.trainable_variables]
        metrics = agent.update()
        moved = [
            v.numpy() - b for v, b in zip(agent.q_network.trainable_variables, before, strict=True)
        ]
        norm = np.sqrt(sum(float(np.sum(np.square(m))) for m in moved))
        assert metrics["train/grad_norm"] > 1e-2  # far above the clip of step 0
        expected = 1e-3 if step == 0 else metrics["train/grad_norm"]
        assert norm == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("gamma", "gamma defines the return every value estimate of the run is of"),
        ("n_step", "n_step is read once, when the agent is built"),
        ("adam_epsilon", "adam_epsilon is read once, when the agent is built"),
        ("eval.epsilon", "eval.epsilon is the same at every evaluation"),
        ("stop_at_eval_return", "stop_at_eval_return is the training loop's threshold"),
        ("workers.apex_epsilon", "workers.apex_epsilon fixes each actor's epsilon"),
    ],
)
def test_a_key_that_stays_a_number_says_why_in_one_line(key, reason):
    hp = registry.get_hparams("dqn_tiny")()
    with pytest.raises(UserError) as error:
        hp.override(f"{key}=linear(0.9, 0.99, 100)")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"--hparam_override: {reason}")
    assert "so it takes a number, not the schedule 'linear(0.9, 0.99, 100)'" in message
