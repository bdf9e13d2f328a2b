"""Workers for `train.py --num_workers N` (docs/workers.md).

- Replay agents and IMPALA: N Ray actors step their own envs and send blocks of experience to
  the learner in the main process (`rl.engines.apex`, `rl.engines.impala`,
  `rl.workers.actor_group`).
- On-policy agents: the training vector env steps its copies in N worker processes
  (`rl.envs.grouped_env`).

Modules are imported where used, so a run without actors never imports Ray.
"""
