"""The rollout API: what a new on-policy or trajectory-replay algorithm is written with.

- `Rollout` (rollout.py): T steps of N envs, time-major, with slice / select_envs / concatenate /
  flatten / batch_major, discounts and Monte-Carlo returns that respect terminations and
  truncations;
- `reevaluate`, `reevaluate_steps`, `bootstrap_values` (reevaluate.py): a stored rollout (or flat
  samples) re-evaluated under another policy (log-probs, values, entropies) in one batched
  forward pass;
- `minibatch_indices`, `shuffle`, `minibatches` (minibatches.py): shuffling with the agent's
  generator;
- `Collector`, `collect_steps`, `collect_episodes` (collect.py): stepping a gymnasium vector env
  with a policy, as rollouts; they run `Driver` (driver.py), the collect loop the engines drive
  their agents with, and its episode bookkeeping `EpisodeStats` (episode_stats.py);
- `ActorCriticPolicy`, `sample_action`, `greedy_action`, `action_log_prob` (policy.py): acting
  with an actor-critic model;
- `monte_carlo_returns` and the return math the agents' advantage estimators share (returns.py).

PPO, A2C, REINFORCE (rl/agents/on_policy.py) and OffPAC (rl/agents/offpac.py) are built on it;
docs/rollout_api.md walks through writing an algorithm with it.
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
