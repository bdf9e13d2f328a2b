"""Which path trains a set, read from its env's name: the one place that reads the "tf/" prefix.

An env registered under "tf/..." is written in TF ops (rl.envs.tf) and trains on the compiled
path, a whole iteration in one XLA program (rl.compiled); every other env is a gymnasium env
stepped from Python. Engines, checks and refusals all ask `runs_compiled`, so a change to the
convention is one edit.
"""

from __future__ import annotations

TF_OPS_ENV_PREFIX = "tf/"


def runs_compiled(env_id: str) -> bool:
    """True for an env written in TF ops, which only the compiled path can train."""
    return env_id.startswith(TF_OPS_ENV_PREFIX)
