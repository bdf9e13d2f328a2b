"""What the compiled-path tests share: a frozen hparams set with overrides, and its TF-ops env."""

from __future__ import annotations

import numpy as np

import rl  # noqa: F401  (fills the registries)
from rl import registry
from rl.envs.tf import TFEnv, make_tf_env
from rl.hparams import HParams


def frozen_hparams(name: str, **overrides) -> HParams:
    """Set `name` with `overrides` set key by key, frozen."""
    hp = registry.get_hparams(name)()
    for key, value in overrides.items():
        setattr(hp, key, value)
    hp.freeze()
    return hp


def tf_env(hp: HParams) -> TFEnv:
    return make_tf_env(hp.env, max_episode_steps=hp.max_episode_steps)


def assert_same_run(joint: dict, single: dict, rtol: float, atol: float) -> None:
    """Every checkpoint value of a member of a joint program equals the single run's: integers
    (counters, generator states, env state) exactly, floats to `rtol`/`atol`."""
    assert joint.keys() == single.keys()
    for key in single:
        if np.issubdtype(single[key].dtype, np.floating):
            np.testing.assert_allclose(joint[key], single[key], rtol=rtol, atol=atol, err_msg=key)
        else:
            np.testing.assert_array_equal(joint[key], single[key], err_msg=key)
