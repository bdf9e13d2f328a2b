"""The compiled training path: TF-ops envs ("tf/..."), one XLA program per PPO iteration.

`CompiledTrainer` has `rl.trainer.Trainer`'s constructor and `.train()` / `.test(episodes)`;
train.py uses it when `hparams.env` starts with "tf/". See `rl.compiled.ppo_iteration`.
"""

from rl.compiled.ppo_iteration import CompiledPPO, EnvVariables
from rl.compiled.trainer import CompiledTrainer

__all__ = ["CompiledPPO", "CompiledTrainer", "EnvVariables"]
