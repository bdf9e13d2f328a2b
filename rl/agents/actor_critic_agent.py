"""What the rollout-based actor-critic agents share (PPO/A2C/REINFORCE, IMPALA, OffPAC): an
`ActorCritic` model, acting by sampling with the agent's generator, and a `RolloutBuffer`.
Learners that correct for the behaviour policy set `records_log_prob` (acting returns log b(a|s)).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rl.agents.base import Agent
from rl.agents.stateless_generator import StatelessGenerator
from rl.errors import UserError
from rl.hparams import HParams
from rl.hparams.compiled_path import runs_compiled
from rl.memory import RolloutBuffer
from rl.models import ActorCritic
from rl.models.actor_critic import NormalizedInputs
from rl.models.running_normalizer import RewardScaler
from rl.models.torch_init import torch_init
from rl.rollout.policy import action_log_prob, greedy_action, sample_action
from rl.types import Batch, HparamTensors, LossAndAux, VectorStep

# What `observe` passes on to `RolloutBuffer.add`.


class ActorCriticAgent(Agent):
    """Base of the agents that act with an `ActorCritic` and store steps in `self.rollout`."""

    records_log_prob: bool = False  # act_with_info returns {"log_prob": log b(a|s)}
    normalizes_at_collection = False  # `normalize_obs_at=collection` (feed-forward PPO, A2C)
    stochastic_policy = True  # pi(.|s): a categorical or a Gaussian
    # What the compiled update (`_train`) takes, set by `_build`: the rollout's TensorSpecs.
    batch_spec: dict[str, tf.TensorSpec]

    def _build_learning(self) -> None:
        self.train_on_batch = self.learner.function(self._train, [self.batch_spec])

    def _actor_critic_loss(
        self,
        policy_loss: tf.Tensor,
        critic_loss: tf.Tensor,
        entropy: tf.Tensor,
        member: HparamTensors | None = None,
    ) -> tf.Tensor:
        """`policy_loss + vf_coef * critic_loss - ent_coef * entropy` at this gradient step
        (a population `member`'s coefficients if given)."""
        vf_coef = self.hparam_values.at("vf_coef", self.learner.gradient_steps, member)
        ent_coef = self.hparam_values.at("ent_coef", self.learner.gradient_steps, member)
        return policy_loss + vf_coef * critic_loss - ent_coef * entropy

    def _build_actor_critic(self) -> None:
        hp, spec = self.hparams, self.spec
        self.model = ActorCritic(
            spec,
            hp.model,
            hp.hidden_sizes,
            hp.activation,
            separate_torsos=hp.separate_torsos,
            log_std_init=hp.log_std_init,
            normalize_obs="normalize_obs" in hp and hp.normalize_obs,
            name="actor_critic",
        )
        self.model(tf.zeros([1, *spec.obs_shape], spec.obs_dtype))  # create the variables
        if "torch_init" in hp and hp.torch_init:
            torch_init(self.model)
        self._build_reward_scaler()
        self.normalizes_at_collection = obs_normalized_at_collection(hp, spec.env_id)

    @property
    def learning_model(self) -> ActorCritic | NormalizedInputs:
        """The model as the update passes stored observations through it: as they are, if the
        rollout holds them normalized already (`normalize_obs_at=collection`)."""
        return NormalizedInputs(self.model) if self.normalizes_at_collection else self.model

    def _build_reward_scaler(self) -> None:
        """VecNormalize's reward scaling with `normalize_reward` (None: rewards as given)."""
        hp = self.hparams
        scale = "normalize_reward" in hp and hp.normalize_reward
        self.reward_scaler = RewardScaler(self.spec.num_envs, hp.gamma) if scale else None

    def _build_rollout(self, num_steps: int, with_value: bool) -> dict[str, tf.TensorSpec]:
        """`self.rollout` of `num_steps` vector steps, and the TensorSpecs of its `data()`."""
        spec = self.spec
        action_dtype = np.dtype(np.int64) if spec.discrete else np.dtype(np.float32)
        self.rollout = RolloutBuffer(
            num_steps, spec.num_envs, spec.obs_shape, spec.obs_dtype, spec.action_shape,
            action_dtype,
        )  # fmt: skip
        return {
            name: tf.TensorSpec(array.shape, tf.as_dtype(array.dtype))
            for name, array in self.rollout.data().items()
            if with_value or name != "value"
        }

    def _act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        # Training observations update the statistics before use (VecNormalize); no value head.
        if explore:
            self.model.update_obs_statistics(obs)
        return self._choose(self.model.policy(obs), explore)

    def _choose(self, params: tf.Tensor, explore: bool) -> tf.Tensor:
        if explore:  # Gumbel-max / Gaussian noise with the agent's generator
            return sample_action(self.model, params, self.generator)
        return greedy_action(self.model, params, self.spec.action_low, self.spec.action_high)

    def _sampled_policy_step(
        self, obs: tf.Tensor, state: tf.Tensor, generator: StatelessGenerator
    ) -> tuple[tf.Tensor, tf.Tensor]:
        return sample_action(self.model, self.model.policy(obs), generator), state

    def _act_with_info(self, obs: tf.Tensor) -> LossAndAux:
        if not self.records_log_prob:
            return super()._act_with_info(obs)
        params = self.model.policy(obs)
        action = sample_action(self.model, params, self.generator)
        return action, {"log_prob": action_log_prob(self.model, params, action)}

    def _observe(self, transition: Batch) -> None:
        if self.reward_scaler is not None:
            done = np.logical_or(transition["terminated"], transition["truncated"])
            transition = {**transition, "reward": self.reward_scaler(transition["reward"], done)}
        if self.normalizes_at_collection:  # with the statistics `_act` has just updated
            normalize = self.model.obs_normalizer
            transition = {**transition, "obs": normalize(transition["obs"]).numpy(),
                          "next_obs": normalize(transition["next_obs"]).numpy()}  # fmt: skip
        # log_prob / value are stored when the acting step supplied them (zeros otherwise).
        step = VectorStep.of(transition)
        self.rollout.add(step, transition.get("log_prob"), transition.get("value"))

    def _end_all_episodes(self) -> None:
        self.rollout.truncate_all()

    def _ready_to_update(self) -> bool:
        return self.rollout.full()

    def _trainable_variables(self) -> list[tf.Variable]:
        return self.model.trainable_variables

    def _numpy_state_parts(self) -> dict[str, object]:
        parts: dict[str, object] = {"rollout": self.rollout}
        if self.reward_scaler is not None:
            parts["reward_scaler"] = self.reward_scaler
        return parts


def obs_normalized_at_collection(hp: HParams, env_id: str) -> bool:
    """Whether `normalize_obs_at` asks for observations stored normalized at collection time
    (UserError where that cannot be: the compiled path collects in the graph, unnormalized)."""
    where = hp.normalize_obs_at if "normalize_obs_at" in hp else "update"
    if where not in ("update", "collection"):
        raise UserError(f"normalize_obs_at={where!r}: use update or collection")
    if where == "collection" and not hp.normalize_obs:
        raise UserError("normalize_obs_at=collection needs normalize_obs=True")
    if where == "collection" and runs_compiled(env_id):
        raise UserError(f"normalize_obs_at=collection: {env_id} trains compiled; use update")
    return where == "collection"
