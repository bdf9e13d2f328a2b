"""Strategies by name (rl/distribute/strategies.py): the TPU path fails fast without a TPU."""

from __future__ import annotations

import time

import pytest
import tensorflow as tf

from rl.distribute import strategies
from rl.distribute.strategies import make_strategy, strategy_from_env
from rl.errors import UserError


def test_tpu_without_a_tpu_fails_fast_and_clearly():
    # This machine has no libtpu and no TPU device: a UserError in well under a second, not a
    # TPUClusterResolver waiting on the GCE metadata server.
    start = time.monotonic()
    with pytest.raises(UserError) as info:
        make_strategy("tpu")
    assert time.monotonic() - start < 5
    message = str(info.value)
    assert "strategy 'tpu'" in message and "\n" not in message
    assert "libtpu" in message or "no TPU device" in message


def test_tpu_runtime_installed_but_no_device(monkeypatch):
    # The TPU image on a non-TPU node: libtpu present, no /dev/accel* or /dev/vfio/N.
    monkeypatch.delenv("TPU_NAME", raising=False)
    monkeypatch.setattr(strategies.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(strategies, "tpu_device_files", lambda: [])
    start = time.monotonic()
    with pytest.raises(UserError, match="no TPU device"):
        make_strategy("tpu")
    assert time.monotonic() - start < 5


def test_unknown_name_suggests():
    with pytest.raises(UserError, match=r"unknown strategy 'mirored'.*did you mean 'mirrored'"):
        make_strategy("mirored")


def test_default_and_env(monkeypatch):
    assert make_strategy("default") is tf.distribute.get_strategy()
    monkeypatch.delenv("RL_STRATEGY", raising=False)
    assert strategy_from_env() is tf.distribute.get_strategy()
    monkeypatch.setenv("RL_STRATEGY", "tpuu")
    with pytest.raises(UserError, match="did you mean 'tpu'"):
        strategy_from_env()


def test_multi_worker_needs_a_cluster(monkeypatch):
    for key in ("TF_CONFIG", "JOB_COMPLETION_INDEX"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(UserError, match="TF_CONFIG"):
        make_strategy("multi_worker_mirrored")
