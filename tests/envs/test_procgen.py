"""CoinRun through procgen as a gymnasium env: spaces, dtypes, seeding, episode ends, option
checks, and a short PPO run through train.py on the default (CNN) torso."""

import csv

import numpy as np
import pytest
from conftest import describe

import rl  # noqa: F401
from rl.envs import make_vector_env
from rl.envs.procgen import ProcgenEnv
from rl.errors import UserError

NOOP = 4  # procgen's action 4 is the empty key combination: stand still


def test_vector_env_spaces_dtypes_and_a_few_hundred_steps():
    env, spec = make_vector_env(
        "procgen/coinrun", 2, seed=0, env_kwargs={"distribution_mode": "easy"}
    )
    assert spec.obs_shape == (64, 64, 3) and spec.obs_dtype == np.uint8
    assert spec.discrete and spec.num_actions == 15
    obs, _ = env.reset(seed=0)
    assert obs.shape == (2, 64, 64, 3) and obs.dtype == np.uint8
    rng = np.random.default_rng(0)
    frames_differ = False
    for _ in range(300):
        next_obs, reward, terminated, truncated, info = env.step(rng.integers(0, 15, size=2))
        assert next_obs.shape == (2, 64, 64, 3) and next_obs.dtype == np.uint8
        assert reward.dtype == np.float64 and set(reward) <= {0.0, 10.0}  # 10: the coin
        assert terminated.dtype == bool and truncated.dtype == bool
        frames_differ |= not np.array_equal(next_obs, obs)
        obs = next_obs
    assert frames_differ and obs.std() > 0  # real rendered frames, not a constant


def test_same_seed_same_levels_and_frames():
    a, b, c = (ProcgenEnv(distribution_mode="easy") for _ in range(3))
    obs_a, info_a = a.reset(seed=11)
    obs_b, info_b = b.reset(seed=11)
    obs_c, info_c = c.reset(seed=12)
    assert info_a["level_seed"] == info_b["level_seed"] != info_c["level_seed"]
    np.testing.assert_array_equal(obs_a, obs_b)
    for action in [7, 7, 8, 5, 7] * 10:  # right, right, right+up, up, right
        step_a, step_b = a.step(action), b.step(action)
        np.testing.assert_array_equal(step_a[0], step_b[0])
        assert step_a[1:4] == step_b[1:4]
        if step_a[2] or step_a[3]:  # both episodes ended together
            break


def test_time_limit_is_a_truncation_and_the_next_level_needs_no_rebuild(monkeypatch):
    # Standing still on the first easy level of seed 3 neither dies nor reaches the coin, so
    # the game's own 1000-step limit ends the episode: a truncation (the agents bootstrap).
    import procgen

    built = []  # every C env procgen builds from here on

    class CountedProcgenEnv(procgen.ProcgenGym3Env):
        def __init__(self, *args, **kwargs):
            built.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(procgen, "ProcgenGym3Env", CountedProcgenEnv)
    env = ProcgenEnv(distribution_mode="easy")
    obs, info = env.reset(seed=3)
    first_level = info["level_seed"]
    for t in range(1, 1001):
        previous = obs
        obs, reward, terminated, truncated, info = env.step(NOOP)
        assert reward == 0.0
        if t < 1000:
            assert not (terminated or truncated)
    assert truncated and not terminated and not info["level_complete"]
    # The returned frame is the last one observed in the ended episode (the game has already
    # moved on), and reset() hands over the next level without building a new C env.
    np.testing.assert_array_equal(obs, previous)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(NOOP)  # the episode is over
    assert len(built) == 1
    next_obs, next_info = env.reset()
    assert len(built) == 1 and next_info["level_seed"] != first_level
    assert not np.array_equal(next_obs, obs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"distribution_mode": "extreme"}, "choose from \\['easy', 'hard'\\]"),
        ({"num_levels": -1}, "must be >= 0"),
        ({"use_backgrounds": False, "paint_vel": True}, "unknown procgen option"),
        ({"render_mode": "human"}, "rgb_array only"),
        ({"game": "plunder"}, "fixes game='coinrun'"),
    ],
)
def test_bad_options_are_user_errors(kwargs, message):
    with pytest.raises(UserError, match=message):
        make_vector_env("procgen/coinrun", 1, seed=0, env_kwargs=kwargs)


def test_rgb_array_render_is_the_large_frame():
    env = ProcgenEnv(render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (512, 512, 3) and frame.dtype == np.uint8


def test_ppo_trains_and_evaluates_on_coinrun_through_train_py(train_here, tmp_path):
    output_dir = tmp_path / "coinrun"
    overrides = (
        "env=procgen/coinrun,env_kwargs={'distribution_mode': 'easy', 'num_levels': 10},"
        "train_steps=128,max_episode_steps=60,eval.every_steps=128,eval.episodes=2,jit_compile=False"
    )
    proc = train_here(
        ["--hparams", "ppo_tiny", "--hparam_override", overrides, "--output_dir", output_dir]
    )
    assert proc.returncode == 0, describe(proc)
    with open(output_dir / "run_0" / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["env_steps"]) for r in rows] == [128]
    # Two 60-step evaluation episodes (time limit) or shorter ones that ended in the game.
    assert 0 < float(rows[0]["eval_length_mean"]) <= 60
    assert float(rows[0]["eval_return_mean"]) in {0.0, 5.0, 10.0}
