"""The compiled programs: TF-ops envs ("tf/..."), one XLA program per training iteration.

Which program trains which agent: `rl.compiled.programs`; the engine that drives them for the
one training loop: `rl.engines.compiled`. How it works, with numbers: docs/compiled.md.
"""

from rl.compiled.base import CompiledRun
from rl.compiled.dqn_iteration import CompiledDQN
from rl.compiled.env_variables import EnvVariables
from rl.compiled.ppo_iteration import CompiledPPO
from rl.compiled.ppo_seeds_iteration import CompiledPPOSeeds

__all__ = [
    "CompiledDQN",
    "CompiledPPO",
    "CompiledPPOSeeds",
    "CompiledRun",
    "EnvVariables",
]
