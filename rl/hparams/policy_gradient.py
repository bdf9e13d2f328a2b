"""Registers the policy-gradient hparams families (one module each): a2c, ppo, reinforce."""

from rl.hparams import a2c, ppo, reinforce  # noqa: F401
