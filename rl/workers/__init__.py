"""Workers for `train.py --num_workers N`.

- Replay agents (DQN, TD3/DDPG, SAC): Ape-X (Horgan et al. 2018, "Distributed Prioritized
  Experience Replay", https://arxiv.org/abs/1803.00933), and IMPALA (Espeholt et al. 2018,
  https://arxiv.org/abs/1802.01561): N Ray actors (on this machine or a Ray cluster) step their
  own envs and send blocks of experience to the learner in the main process, which trains,
  evaluates and checkpoints (`rl.engines.apex`, `rl.engines.impala`; the actors:
  `rl.workers.actor_group`).
- On-policy agents (PPO, A2C, REINFORCE): the usual trainer, whose training vector env steps its
  copies in N worker processes of this machine (`rl.envs.grouped_env.GroupedAsyncVectorEnv`, via
  `rl.envs.make_vector_env(..., num_workers=N)`).

docs/workers.md describes where each part runs, faults and restarts, and measured throughput.
Modules are imported where used: the package itself imports nothing heavy, and a run without
actors never imports Ray.
"""
