"""One on-policy iteration (PPO, A2C, REINFORCE) over TF-ops envs as ONE XLA program: rollout,
advantages, all update epochs.

Why: with the env in TF ops nothing in an iteration needs the host, so the iteration steps the
envs T times and hands the [T, N] batch to the agent's own `OnPolicyAgent.learner_step`: losses,
GAE, model, optimizer and schedules are the agent's, not copies (docs/compiled.md, "What one
iteration is").
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.on_policy import OnPolicyAgent
from rl.compiled.base import CompiledRun
from rl.errors import UserError


class CompiledPPO(CompiledRun):
    """A single-seed compiled run of an on-policy agent (`OnPolicyAgent`: ppo, a2c, reinforce)."""

    def _check_agent(self) -> None:
        if not isinstance(self.agent, OnPolicyAgent):
            raise UserError(
                f"agent {self.hp.agent!r} has no on-policy compiled path for TF-ops envs"
                f" ({self.hp.env!r}); use ppo, a2c or reinforce"
            )

    def _iteration(self) -> dict[str, tf.Tensor]:
        agent, env = self.agent, self.env
        out = self._collect()
        agent.env_steps.assign_add(self.steps_per_iteration)

        batch = dict(out.transitions)
        batch["last_next_obs"] = env.observe(out.state)
        # Recomputed by `_train` from the acting weights (unchanged during the rollout).
        batch["log_prob"] = tf.zeros_like(batch["reward"])
        batch["value"] = tf.zeros_like(batch["reward"])
        metrics = dict(agent.learner_step(batch))  # the agent's own update body (module doc)
        metrics["episodes_done"] = out.episodes_done[0]
        metrics["episode_return_sum"] = out.episode_return_sum[0]
        metrics["episode_length_sum"] = out.episode_length_sum[0]
        return metrics
