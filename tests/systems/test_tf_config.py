"""TF_CONFIG built in-process from an Indexed Job's environment (rl/distribute/tf_config.py)."""

from __future__ import annotations

import json

import pytest

from rl.distribute.tf_config import install_tf_config, tf_config_from_env
from rl.errors import UserError

JOB_ENV = {
    "JOB_COMPLETION_INDEX": "2",
    "RL_NUM_WORKERS": "3",
    "RL_JOB_NAME": "rl-ppo-20261121-120000-ab12",
    "RL_SERVICE": "rl-ppo-20261121-120000-ab12",
    "RL_WORKER_PORT": "2222",
}


def test_from_indexed_job():
    # Pod <job>-<i> of an Indexed Job with subdomain <service> resolves as <job>-<i>.<service>.
    name = "rl-ppo-20261121-120000-ab12"
    assert tf_config_from_env(JOB_ENV) == {
        "cluster": {
            "worker": [
                f"{name}-0.{name}:2222",
                f"{name}-1.{name}:2222",
                f"{name}-2.{name}:2222",
            ]
        },
        "task": {"type": "worker", "index": 2},
    }


def test_defaults_service_and_port():
    env = {"JOB_COMPLETION_INDEX": "0", "RL_NUM_WORKERS": "2", "RL_JOB_NAME": "j"}
    config = tf_config_from_env(env)
    assert config["cluster"]["worker"] == ["j-0.j:2222", "j-1.j:2222"]
    assert config["task"] == {"type": "worker", "index": 0}


def test_outside_a_job_is_none():
    assert tf_config_from_env({}) is None


def test_existing_tf_config_wins():
    given = {"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}
    env = {**JOB_ENV, "TF_CONFIG": json.dumps(given)}
    assert tf_config_from_env(env) == given
    assert install_tf_config(env) == given
    assert json.loads(env["TF_CONFIG"]) == given  # untouched


def test_install_sets_the_variable():
    env = dict(JOB_ENV)
    config = install_tf_config(env)
    assert json.loads(env["TF_CONFIG"]) == config
    assert config["task"]["index"] == 2


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"JOB_COMPLETION_INDEX": "3"}, ["JOB_COMPLETION_INDEX=3", "0..2"]),
        ({"RL_NUM_WORKERS": "two"}, ["RL_NUM_WORKERS", "'two'"]),
        ({"RL_JOB_NAME": ""}, ["RL_JOB_NAME"]),
        ({"TF_CONFIG": "{not json"}, ["TF_CONFIG", "JSON"]),
    ],
)
def test_bad_environment(change, words):
    with pytest.raises(UserError) as info:
        tf_config_from_env({**JOB_ENV, **change})
    for word in words:
        assert word in str(info.value)


def test_missing_worker_count():
    env = {k: v for k, v in JOB_ENV.items() if k != "RL_NUM_WORKERS"}
    with pytest.raises(UserError, match="RL_NUM_WORKERS"):
        tf_config_from_env(env)
