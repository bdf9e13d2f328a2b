"""Sets published by `python -m rl.tune --publish` (generated: one import per set)."""

from rl.hparams.tuned import (  # noqa: F401
    ppo_cartpole_tuned,
)
