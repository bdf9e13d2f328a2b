"""MADDPG: per-agent deterministic actors, trained with centralized critics that see every agent.

Lowe, Wu, Tamar, Harb, Abbeel & Mordatch 2017, "Multi-Agent Actor-Critic for Mixed
Cooperative-Competitive Environments", https://arxiv.org/abs/1706.02275 (Algorithm 1).

The env stacks agents on a leading axis (rl/envs/multi_agent.py) with one team reward, so every
critic regresses the same return, as in the paper's cooperative tasks. The N critics are ONE
`Critics` model with N heads; actors are named attributes (`actor_0`, ...) so checkpoints see
them. One Adam per role equals per-agent optimizers, except that `max_grad_norm` clips the joint
norm. `share_actor` makes all agents act through one actor. Unlike the paper: Gaussian
exploration instead of Gumbel-softmax, no policy ensembles, no inferred policies of others.
"""

from __future__ import annotations

import dataclasses

import tensorflow as tf

from rl.agents.function_slots import FunctionSlot, resolve_function
from rl.agents.gradient_functions import (
    maddpg_actor_loss,
    maddpg_critic_loss,
    maddpg_critic_target,
    maddpg_joint_actions,
)
from rl.agents.off_policy_continuous import OffPolicyContinuousAgent, polyak_update
from rl.errors import UserError
from rl.models import DeterministicActor
from rl.registry import action_functions, register_agent


@register_agent("maddpg")
class MADDPG(OffPolicyContinuousAgent):
    """N deterministic actors (one per row of the agent axis) and N centralized critics."""

    loss_metrics = ("loss", "actor_loss", "q_mean")
    replays_with_hindsight = False  # its transitions hold every agent's observation, no goals
    # Stateless noise only: the agent keeps no per-env noise state.
    function_slots = {"action_function": FunctionSlot(action_functions, ("action_noise",))}
    supports_strategies = True  # every critic's and actor's loss is a mean over the batch

    # ---------------------------------------------------------------------- building
    def _build_networks(self) -> None:
        hp, spec = self.hparams, self.spec
        self.action_function = resolve_function(self, "action_function")
        if len(spec.obs_shape) != 2 or len(spec.action_shape) != 2:
            raise UserError(
                f"agent 'maddpg' needs a multi-agent env with observations [n_agents, obs_dim] "
                f"and actions [n_agents, act_dim]; env {spec.env_id!r} has observations "
                f"{list(spec.obs_shape)} and actions {list(spec.action_shape)} (use e.g. "
                "env=mpe/simple_spread_v3, or td3 for a single agent)"
            )
        if spec.obs_shape[0] != spec.action_shape[0]:
            raise UserError(
                f"env {spec.env_id!r}: {spec.obs_shape[0]} observation rows but "
                f"{spec.action_shape[0]} action rows; both must be one row per agent"
            )
        if hp.num_critics != 1:
            raise UserError(
                f"maddpg has one centralized critic per agent; set num_critics=1 "
                f"(got {hp.num_critics})"
            )
        self.num_agents = int(spec.obs_shape[0])
        if hp.share_actor and not (
            (spec.action_low == spec.action_low[0]).all()
            and (spec.action_high == spec.action_high[0]).all()
        ):
            raise UserError(
                f"share_actor=True needs agents with the same action bounds; env "
                f"{spec.env_id!r} has different ones per agent (set share_actor=False)"
            )
        self.num_actors = 1 if hp.share_actor else self.num_agents  # parameter sharing
        obs = tf.zeros([1, *spec.obs_shape], spec.obs_dtype)
        for prefix in ("actor", "actor_target"):
            for i in range(self.num_actors):
                actor = DeterministicActor(
                    self._agent_spec(i),
                    hp.model,
                    hp.hidden_sizes,
                    hp.activation,
                    name=f"{prefix}_{i}",
                )
                actor(obs[:, i])
                setattr(self, f"{prefix}_{i}", actor)
        self._build_critics(self.num_agents)
        polyak_update(self._actor_variables(target=True), self._actor_variables(), 1.0)

    def _build_learning(self) -> None:
        super()._build_learning()
        self.actor_optimizer = self.learner.another_optimizer(self._actor_variables(trainable=True))

    def _agent_spec(self, i: int):
        """Agent i's own view of the env: its observation row and its action row's bounds."""
        spec = self.spec
        return dataclasses.replace(
            spec,
            obs_shape=tuple(spec.obs_shape[1:]),
            action_shape=tuple(spec.action_shape[1:]),
            action_low=spec.action_low[i],
            action_high=spec.action_high[i],
        )

    def _actors(self, target: bool = False) -> list[DeterministicActor]:
        prefix = "actor_target" if target else "actor"
        return [getattr(self, f"{prefix}_{i}") for i in range(self.num_actors)]

    def _actor_variables(self, target: bool = False, trainable: bool = False) -> list:
        attr = "trainable_variables" if trainable else "variables"
        return [v for actor in self._actors(target) for v in getattr(actor, attr)]

    # ------------------------------------------------------------------------ acting
    def joint_action(self, obs: tf.Tensor, target: bool = False) -> tf.Tensor:
        """[B, N, A]: agent i's actor on observation row i only (decentralized execution)."""
        actors = self._actors(target)
        if self.num_actors == 1 and self.num_agents > 1:  # shared: all rows in one batch
            batch = tf.shape(obs)[0]
            flat = actors[0](tf.reshape(obs, [-1, *obs.shape[2:]]))
            return tf.reshape(flat, [batch, self.num_agents, *flat.shape[1:]])
        return tf.stack([actor(obs[:, i]) for i, actor in enumerate(actors)], axis=1)

    def _policy_action(self, obs: tf.Tensor) -> tf.Tensor:
        return self.joint_action(obs)

    def _explore_action(self, obs: tf.Tensor) -> tf.Tensor:
        action = self.joint_action(obs)
        sigma = self.hparam_values.at("action_noise_std", self.env_steps)
        return self.action_function(
            action, self.generator, sigma, self.action_low, self.action_high
        )

    # ---------------------------------------------------------------------- learning
    def own_q(self, obs: tf.Tensor, joint_actions: tf.Tensor) -> tf.Tensor:
        """[N, B]: critic i at joint action i, the N joint actions batched ([N*B]) through all heads
        and each head's own block kept (the diagonal of [N, N, B])."""
        n = self.num_agents
        batch = tf.shape(obs)[0]
        tiled_obs = tf.reshape(
            tf.tile(obs[None], [n] + [1] * len(obs.shape)), [n * batch, *obs.shape[1:]]
        )
        flat_actions = tf.reshape(joint_actions, [n * batch, *joint_actions.shape[2:]])
        q_all = tf.reshape(self.critics(tiled_obs, flat_actions), [n, n, batch])
        return tf.reduce_sum(q_all * tf.eye(n)[:, :, None], axis=1)

    def _train_step(self, sample: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        next_action = self.joint_action(sample["next_obs"], target=True)
        next_q = self.critics_target(sample["next_obs"], next_action)
        td_target = maddpg_critic_target(sample["reward"], sample["discount"], next_q)

        def critic_loss_fn(q_values, td_target, weights):  # td_target [B, N], as a strategy splits
            return maddpg_critic_loss(q_values, tf.transpose(td_target), weights)

        loss, aux = self._critic_step(sample, tf.transpose(td_target), critic_loss_fn)

        def actor_loss_fn(part):
            policy_action = self.joint_action(part["obs"])
            joint = maddpg_joint_actions(part["action"], policy_action)
            return maddpg_actor_loss(self.own_q(part["obs"], joint)), {}

        actor_batch = {"obs": sample["obs"], "action": sample["action"]}
        actor_variables = self._actor_variables(trainable=True)
        actor_loss, _ = self.learner.uncounted_step(
            self.actor_optimizer, actor_loss_fn, actor_variables, actor_batch
        )
        tau = self.hparam_values.at("tau", self.learner.gradient_steps)
        polyak_update(self.critics_target.variables, self.critics.variables, tau)
        polyak_update(self._actor_variables(target=True), self._actor_variables(), tau)
        return {"loss": loss, "actor_loss": actor_loss, **aux}
