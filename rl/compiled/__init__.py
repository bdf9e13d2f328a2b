"""The compiled training path: TF-ops envs ("tf/..."), one XLA program per training iteration.

`CompiledTrainer` has `rl.trainer.Trainer`'s constructor and `.train()` / `.test(episodes)`;
train.py uses it when `hparams.env` starts with "tf/", and `train_copies` for `--copies N`
(all N seeds in one program where the agent allows). Which program trains which agent:
`rl.compiled.engines`. How it works, with numbers: docs/compiled.md.
"""

from rl.compiled.base import CompiledRun
from rl.compiled.dqn_iteration import CompiledDQN
from rl.compiled.env_variables import EnvVariables
from rl.compiled.ppo_iteration import CompiledPPO
from rl.compiled.seeds import CompiledPPOSeeds
from rl.compiled.trainer import CompiledTrainer, train_copies

__all__ = [
    "CompiledDQN",
    "CompiledPPO",
    "CompiledPPOSeeds",
    "CompiledRun",
    "CompiledTrainer",
    "EnvVariables",
    "train_copies",
]
