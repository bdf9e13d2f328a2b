"""The rollout API: what a new on-policy or trajectory-replay algorithm is written with.

`Rollout` (T steps of N envs, time-major), re-evaluation under another policy, minibatching with
the agent's generator, collecting from a vector env (`Driver`, the loop the engines use), acting
with an actor-critic model and the shared return math. docs/rollout_api.md walks through writing
an algorithm with it.
"""

from rl.rollout.collect import Collector, collect_episodes, collect_steps
from rl.rollout.minibatches import minibatch_indices, minibatches, shuffle
from rl.rollout.policy import ActorCriticPolicy, action_log_prob, greedy_action, sample_action
from rl.rollout.reevaluate import PolicyOutputs, bootstrap_values, reevaluate, reevaluate_steps
from rl.rollout.returns import monte_carlo_returns
from rl.rollout.rollout import Rollout, concatenate, flatten_steps, swap_lead_axes

__all__ = [
    "ActorCriticPolicy",
    "Collector",
    "PolicyOutputs",
    "Rollout",
    "action_log_prob",
    "bootstrap_values",
    "collect_episodes",
    "collect_steps",
    "concatenate",
    "reevaluate",
    "reevaluate_steps",
    "flatten_steps",
    "greedy_action",
    "minibatch_indices",
    "minibatches",
    "monte_carlo_returns",
    "sample_action",
    "shuffle",
    "swap_lead_axes",
]
