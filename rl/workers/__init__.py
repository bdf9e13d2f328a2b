"""Parallel workers on one machine (`train.py --num_workers N`), built on existing engines only:
Python multiprocessing (spawn context) and gymnasium's AsyncVectorEnv.

- Replay agents (DQN, TD3/DDPG, SAC): Ape-X (Horgan et al. 2018, "Distributed Prioritized
  Experience Replay", https://arxiv.org/abs/1803.00933). N actor processes step their own envs
  with their own exploration and stream n-step transitions (with actor-side priorities) to the
  learner in the main process, which owns the replay, trains, evaluates and checkpoints
  (`rl.engines.apex.ApexEngine`).
- On-policy agents (PPO, A2C, REINFORCE): the usual trainer, whose training vector env steps its
  copies in N worker processes (`rl.envs.grouped_env.GroupedAsyncVectorEnv`, via
  `rl.envs.make_vector_env(..., num_workers=N)`).

docs/workers.md describes the design, the lifecycle (Ctrl-C, worker crashes, parent death) and
measured throughput. Modules are imported where used: the package itself imports nothing heavy.
"""
