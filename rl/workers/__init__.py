"""Ray actors for `train.py --num_workers N` with replay agents and IMPALA (docs/workers.md);
other agents step their env copies in worker processes (`rl.envs.grouped_env`). Modules are
imported where used, so a run without actors never imports Ray.
"""
