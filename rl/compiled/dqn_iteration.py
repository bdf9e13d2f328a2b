"""One DQN iteration over TF-ops envs as ONE XLA program: rollout, replay writes, K gradient steps.

Mnih et al. 2015 (Nature 518), with van Hasselt et al. 2015's double-Q target
(https://arxiv.org/abs/1509.06461) when `double_q` is on: the agent is `rl.agents.dqn.DQN`,
unchanged, with an in-graph ring buffer (`rl.compiled.replay.TFReplay`); docs/compiled.md, "What
one iteration is". The compiled replay is uniform and one-step: `memory=prioritized` or
`n_step > 1` are refused with a clear error.
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.dqn import DQN
from rl.compiled.base import CompiledRun
from rl.compiled.replay import TFReplay
from rl.errors import UserError


class CompiledDQN(CompiledRun):
    """A single-seed compiled DQN run (the replay is part of its checkpoint)."""

    def _check_agent(self) -> None:
        hp = self.hp
        if not isinstance(self.agent, DQN):
            raise UserError(f"agent {hp.agent!r} has no compiled DQN path")
        if hp.memory != "uniform" or hp.n_step != 1:
            raise UserError(
                f"the compiled DQN keeps a uniform one-step replay in the graph; got memory="
                f"{hp.memory!r}, n_step={hp.n_step}: set memory=uniform,n_step=1 or use a "
                "gymnasium env"
            )
        if self.agent.steps_per_iteration * self.spec.num_envs > hp.buffer_size:
            raise UserError(
                f"train_every={hp.train_every} is larger than buffer_size={hp.buffer_size}: "
                "one iteration's transitions must fit in the replay"
            )

    def _extra_state(self) -> dict[str, tf.Module]:
        spec = self.spec
        obs_dtype = tf.as_dtype(spec.obs_dtype)
        self.replay = TFReplay(
            self.hp.buffer_size,
            {
                "obs": (spec.obs_shape, obs_dtype),
                "action": ((), tf.int64),
                "reward": ((), tf.float32),
                "next_obs": (spec.obs_shape, obs_dtype),
                "discount": ((), tf.float32),
            },
        )
        return {"replay": self.replay}

    def _iteration(self) -> dict[str, tf.Tensor]:
        agent, hp = self.agent, self.hp
        num_envs = self.spec.num_envs
        out = self._collect(after_step=lambda: agent.env_steps.assign_add(num_envs))

        steps = out.transitions
        rows = self.num_steps * num_envs

        def flat(x: tf.Tensor) -> tf.Tensor:  # [T, N, ...] -> [T * N, ...], time-major
            return tf.reshape(x, [rows, *x.shape[2:]])

        self.replay.add(
            {
                "obs": flat(steps["obs"]),
                "action": flat(steps["action"]),
                "reward": flat(steps["reward"]),
                "next_obs": flat(steps["final_obs"]),
                "discount": flat(hp.gamma * (1.0 - tf.cast(steps["terminated"], tf.float32))),
            }
        )

        ready = tf.logical_and(
            self.replay.size() >= max(hp.batch_size, 1),
            agent.env_steps >= hp.learning_starts,
        )

        def learn() -> tuple[tf.Tensor, ...]:
            batch = self.replay.sample(agent.generator, hp.gradient_steps, hp.batch_size)
            batch["weights"] = tf.ones_like(batch["reward"])
            metrics = agent.learner_step(batch)
            return metrics["loss"], metrics["grad_norm"], metrics["q_mean"], tf.constant(1.0)

        def wait() -> tuple[tf.Tensor, ...]:
            return (tf.constant(0.0),) * 4

        loss, grad_norm, q_mean, learned = tf.cond(ready, learn, wait)
        return {
            "loss": loss,
            "grad_norm": grad_norm,
            "q_mean": q_mean,
            "learned": learned,  # 0: not learning yet, the trainer skips loss/grad_norm/q_mean
            "episodes_done": out.episodes_done[0],
            "episode_return_sum": out.episode_return_sum[0],
            "episode_length_sum": out.episode_length_sum[0],
        }
