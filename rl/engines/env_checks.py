"""What train.py checks about the env before anything is written: that the agent takes its
observations (a Dict space, an action mask; docs/observations.md, docs/masking.md). One copy of
the env is built and closed for it, since an `info["action_mask"]` shows only after a reset.
"""

from __future__ import annotations

from rl import registry
from rl.envs import single_env_spec
from rl.hparams import HParams


def check_agent_takes_env(hparams: HParams) -> None:
    """UserError naming the problem and the fix when `hparams.agent` cannot take `hparams.env`'s
    observations; nothing for sets without an agent or agents registered by the env's module."""
    if "agent" not in hparams.keys():
        return
    spec = single_env_spec(hparams.env, hparams.env_kwargs)
    if hparams.agent not in registry.agents:  # a `module:Class` env may register it on import
        return
    registry.agents.get(hparams.agent).check_env(hparams.agent, spec)
