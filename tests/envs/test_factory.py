"""Env resolution by name, EnvSpec facts, and the autoreset mode every vector env uses."""

import sys
import textwrap

import numpy as np
import pytest

import rl  # noqa: F401
from rl.envs import check_env_name, make_vector_env
from rl.envs.factory import AUTORESET_MODE
from rl.errors import UserError


def test_gymnasium_id_gives_vector_env_and_spec():
    env, spec = make_vector_env("CartPole-v1", 3, seed=0)
    assert env.num_envs == 3 and env.metadata["autoreset_mode"] == AUTORESET_MODE
    assert spec.obs_shape == (4,) and spec.obs_dtype == np.float32
    assert spec.discrete and spec.num_actions == 2 and spec.action_shape == ()
    assert spec.max_episode_steps == 500


def test_box_actions_carry_bounds_and_time_limit_override():
    env, spec = make_vector_env("Pendulum-v1", 1, seed=0, max_episode_steps=7)
    assert spec.action_type == "box" and spec.action_shape == (1,)
    np.testing.assert_allclose(spec.action_low, [-2.0])
    np.testing.assert_allclose(spec.action_high, [2.0])
    assert spec.max_episode_steps == 7
    env.reset(seed=0)
    for _ in range(6):
        *_, terminated, truncated, _ = env.step(np.zeros((1, 1), np.float32))
        assert not truncated[0]
    *_, terminated, truncated, info = env.step(np.zeros((1, 1), np.float32))
    assert truncated[0] and not terminated[0] and info["_final_obs"][0]


def test_same_seed_same_observations():
    a, _ = make_vector_env("CartPole-v1", 2, seed=5)
    b, _ = make_vector_env("CartPole-v1", 2, seed=5)
    np.testing.assert_array_equal(a.reset(seed=9)[0], b.reset(seed=9)[0])


def test_custom_env_by_module_path(tmp_path, monkeypatch):
    (tmp_path / "my_envs.py").write_text(
        textwrap.dedent('''
        import gymnasium as gym
        import numpy as np

        class Corridor(gym.Env):
            """Walk right to the end of a corridor of `length` cells."""
            def __init__(self, length=4):
                self.length = length
                self.observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
                self.action_space = gym.spaces.Discrete(2)
            def reset(self, seed=None, options=None):
                super().reset(seed=seed)
                self.pos = 0
                return np.array([0.0], np.float32), {}
            def step(self, action):
                self.pos = max(0, self.pos + (1 if action == 1 else -1))
                done = self.pos >= self.length
                obs = np.array([self.pos / self.length], np.float32)
                return obs, float(done), done, False, {}
    ''')
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    env, spec = make_vector_env("my_envs:Corridor", 2, seed=0, env_kwargs={"length": 2})
    assert spec.num_actions == 2 and spec.obs_shape == (1,)
    env.step(np.array([1, 1]))
    _, reward, terminated, _, _ = env.step(np.array([1, 1]))
    np.testing.assert_array_equal(terminated, [True, True])
    np.testing.assert_array_equal(reward, [1.0, 1.0])
    sys.modules.pop("my_envs", None)


@pytest.mark.parametrize(
    "name, words",
    [
        ("CartPole-v9", ["unknown env 'CartPole-v9'", "CartPole-v1"]),
        ("no_such_module_xyz:Env", ["cannot import module 'no_such_module_xyz'"]),
        ("gymnasium:NoSuchEnv", ["has no gymnasium.Env subclass"]),
    ],
)
def test_bad_env_names_are_user_errors(name, words):
    with pytest.raises(UserError) as info:
        check_env_name(name)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(
    "name, env_kwargs, words",
    [
        ("CartPole-v1", {"foo": 1}, ["'CartPole-v1'", "'foo'", "sutton_barto_reward"]),
        # a typo names the close key; gym.make's own keys count as accepted ones
        ("LunarLander-v3", {"continous": True}, ["did you mean 'continuous'?", "gravity"]),
        ("gymnasium:Pendulum-v1", {"gravity": 9.8}, ["'gravity'", "it takes: render_mode, g"]),
    ],
)
def test_bad_env_kwargs_are_one_line_user_errors(name, env_kwargs, words):
    for check in (
        lambda: check_env_name(name, env_kwargs),
        lambda: make_vector_env(name, 1, seed=0, env_kwargs=env_kwargs),
    ):
        with pytest.raises(UserError) as info:
            check()
        message = str(info.value)
        assert "\n" not in message
        for word in words:
            assert word in message, message


def test_accepted_env_kwargs_reach_the_env():
    env, spec = make_vector_env("LunarLander-v3", 1, seed=0, env_kwargs={"continuous": True})
    assert spec.action_type == "box" and spec.action_shape == (2,)
    env, spec = make_vector_env("CartPole-v1", 1, seed=0, env_kwargs={"max_episode_steps": 9})
    assert spec.max_episode_steps == 9
    check_env_name("CartPole-v1", {"sutton_barto_reward": True})


def test_train_py_rejects_a_bad_env_kwargs_key_with_exit_2(tmp_path, capsys):
    # In-process: the exit status and one-line contract of a real process are
    # tests/test_cli_errors.py's test_bad_input_in_a_real_process (e2e).
    import train

    out = tmp_path / "run"
    override = "env_kwargs={'sutton_barto_rewrd':True}"
    capsys.readouterr()
    status = train.main(
        ["--hparams", "dqn_tiny", "--output_dir", str(out), "--hparam_override", override]
    )
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("train.py")]
    assert status == 2, err[-2000:]
    assert len(lines) == 1 and "did you mean 'sutton_barto_reward'?" in lines[0], err
    assert "Traceback" not in err
    assert not out.exists()
