"""Keys shared by the off-policy continuous-control families (td3/ddpg, sac).

Not a registered set itself: `rl/hparams/td3.py`, `ddpg.py` and `sac.py` start from
`off_policy_continuous()`. Defaults are Stable-Baselines3's, except that updates run as
`gradient_steps` steps every `train_every` env steps in one compiled call (same 1:1 ratio).
"""

from __future__ import annotations

from rl.hparams.common import base
from rl.hparams.hparams import HParams
from rl.hparams.schedules import Schedule


def off_policy_continuous() -> HParams:
    """Replay, warm-up, target-update and critic keys of every continuous off-policy agent."""
    hp = base()
    hp.env = "Pendulum-v1"
    hp.add("memory", "uniform", "Replay memory: uniform or prioritized (train.py --list).")
    hp.add("buffer_size", 1_000_000, "Replay capacity in transitions.")
    hp.add("batch_size", 256, "Transitions per gradient step.")
    hp.add("learning_starts", 100, "Env steps of uniformly random actions before learning.")
    hp.train_every = 64
    hp.add(
        "gradient_steps",
        64,
        "Gradient steps per update call (one compiled call); = train_every keeps SB3's 1:1.",
    )
    hp.add("tau", 0.005, "Polyak rate of the target networks: target += tau (online - target).")
    hp.add("num_critics", 2, "Q networks; targets use their minimum (clipped double Q).")
    hp.add("per_alpha", 0.6, "Prioritized replay: priority exponent alpha.")
    hp.add(
        "per_beta",
        "linear(0.4, 1.0, 100000)",
        "Prioritized replay: importance-sampling exponent beta, a schedule of the env step.",
        type=Schedule,
    )
    hp.add("per_epsilon", 1e-6, "Prioritized replay: added to |TD error| before alpha.")
    hp.hidden_sizes = [256, 256]
    hp.max_grad_norm = 0.0
    hp.lr = 3e-4
    hp.train_steps = 1_000_000
    hp.eval.every_steps = 10_000
    return hp
