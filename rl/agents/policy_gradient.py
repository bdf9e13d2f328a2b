"""Registers the policy-gradient agents (one module each): "a2c", "ppo", "reinforce".

They share `rl.agents.on_policy.OnPolicyAgent`.
"""

from rl.agents import a2c, ppo, reinforce  # noqa: F401
