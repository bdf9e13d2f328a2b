"""Every registered hparams set that trains on an env has a learning test, so a regression in
any set is caught by `pytest -m slow`; the sets without one are listed here with the reason.

A set counts as covered when a learning test file (tests/**/test_*learning*.py) names it in
quotes. `*_tiny` sets are smoke sets (tests/test_train_smoke.py), not learning sets.
"""

from __future__ import annotations

import re
from pathlib import Path

import rl  # noqa: F401  (fills the registries)
from rl import registry

TESTS = Path(__file__).resolve().parent
MUJOCO_ENVS = ("halfcheetah", "hopper", "walker2d", "ant")
NO_LEARNING_TEST = {
    "dqn_pong": "Pong shows learning only after millions of frames: hours on a CI CPU "
    "(docs/benchmarks.md, benchmarks/atari_throughput.py)",
    "ppo_pong": "Pong shows learning only after millions of frames: hours on a CI CPU "
    "(docs/benchmarks.md)",
}
# MuJoCo: a learning test's threshold must not be below what SB3 reaches at the same budget on
# this machine (tests/test_learning_mujoco.py). Measured there so far: SAC, TD3 and PPO on
# HalfCheetah at 100k env steps, one test per family; the other envs share their family's
# settings and cost as much per step (docs/benchmarks.md, "MuJoCo").
NO_LEARNING_TEST |= dict.fromkeys(
    [f"{algo}_{env}" for algo in ("sac", "td3", "ppo") for env in MUJOCO_ENVS]
    + ["ddpg_halfcheetah"],
    "no MuJoCo learning test: its family's test is on HalfCheetah (above)",
)
for tested in ("sac_halfcheetah", "td3_halfcheetah", "ppo_halfcheetah"):
    del NO_LEARNING_TEST[tested]


def _learning_test_text() -> str:
    files = sorted(TESTS.rglob("test_*learning*.py"))
    return "\n".join(path.read_text() for path in files if path.name != Path(__file__).name)


# DQN variants whose defaults are sets of the dqn agent (noisy head, Rainbow's parts switched on).
VARIANT_DEFAULTS = {"noisy_dqn", "rainbow"}


def _is_family_default(name: str) -> bool:
    """An agent's defaults (`dqn`, `ppo`, ..., and `VARIANT_DEFAULTS`): sets for an env start
    from them, and those are the sets tested."""
    return name in VARIANT_DEFAULTS or registry.get_hparams(name)().agent == name


def test_every_env_set_has_a_learning_test_or_a_reason():
    text = _learning_test_text()
    sets = sorted(n for n in registry.hparams.names() if not n.endswith("_tiny"))
    uncovered = [
        name
        for name in sets
        if not _is_family_default(name)
        and name not in NO_LEARNING_TEST
        and not re.search(rf"[\"']{re.escape(name)}[\"']", text)
    ]
    assert not uncovered, f"sets with no learning test (add one, or a reason here): {uncovered}"


def test_the_reasons_name_sets_that_exist_and_stay_untested():
    text = _learning_test_text()
    for name in NO_LEARNING_TEST:
        assert name in registry.hparams, f"{name} is not registered: drop it here"
        assert not re.search(rf"[\"']{re.escape(name)}[\"']", text), f"{name} is tested now"
