"""PPO with a recurrent (GRU or LSTM) policy, trained on sequences.

PPO: Schulman et al. 2017, https://arxiv.org/abs/1707.06347. Recurrent PPO as in OpenAI
baselines' `ppo2` with LSTM policies and SB3-contrib's RecurrentPPO: only how log-probs and
values are computed changes. In one compiled call per rollout:
1. the core is re-run over each env's chunk from its stored initial state (zeroed where an
   episode starts), which reproduces the acting-time log pi(a|s) and V(s);
2. each chunk is cut into T / `sequence_length` sequences starting from their stored acting-time
   states; minibatches are whole sequences (`batch_size` in steps), shuffled as sequences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import tensorflow as tf

from rl.agents.gradient_functions import masked_mean
from rl.agents.on_policy import PolicyOutputs, explained_variance
from rl.agents.ppo import PPO
from rl.agents.recurrent import RecurrentStateMixin
from rl.agents.stateless_generator import StatelessGenerator
from rl.errors import UserError
from rl.hparams import as_schedule
from rl.models.recurrent import RecurrentActorCritic, check_cell
from rl.models.torch_init import torch_init
from rl.registry import register_agent
from rl.rollout import action_log_prob, sample_action, swap_lead_axes
from rl.rollout.returns import episode_discounts, fold_truncation
from rl.types import Batch, LossAndAux, Metrics, TensorBatch

# Per-step fields a minibatch holds, time-major [sequence_length, sequences, ...].
SEQUENCE_FIELDS = (
    "obs", "action", "old_log_prob", "old_value", "advantage", "return", "mask", "episode_start",
)  # fmt: skip


class RolloutStates:
    """The recurrent state every rollout step started from ([T, N, S]), checkpointed with the
    rollout (a run cut short mid-rollout resumes with its chunk's initial states)."""

    def __init__(self, num_steps: int, num_envs: int, state_size: int) -> None:
        self.array = np.zeros([num_steps, num_envs, state_size], np.float32)

    def state_dict(self) -> dict[str, np.ndarray]:
        return {"state_in": self.array.copy()}

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        saved = np.asarray(state["state_in"])
        if saved.shape != self.array.shape:
            raise ValueError(
                f"checkpoint rollout states are {list(saved.shape)}, expected "
                f"{list(self.array.shape)} (num_envs, train_every or recurrent_units changed?)"
            )
        self.array[...] = saved


def sequence_major(minibatch: TensorBatch) -> TensorBatch:
    """[L, sequences, ...] fields <-> [sequences, L, ...] ("initial_state" [sequences, S] stays):
    sequences on axis 0 are what a distribution strategy splits (its own inverse)."""
    return {
        key: value if key == "initial_state" else swap_lead_axes(value)
        for key, value in minibatch.items()
    }


@register_agent("ppo_recurrent")
class RecurrentPPO(RecurrentStateMixin, PPO):
    """PPO-clip with a torso -> GRU/LSTM -> heads actor-critic; learns on sequences."""

    supports_strategies = True  # split along sequences (sequence-major), never along time

    # ---------------------------------------------------------------------- building
    def _build(self) -> None:
        hp, spec = self.hparams, self.spec
        check_cell(hp.recurrent_cell)
        self.clip_range = as_schedule(hp.clip_range)
        self.model = RecurrentActorCritic(
            spec, hp.model, hp.hidden_sizes, hp.activation, hp.recurrent_cell,
            hp.recurrent_units, separate_torsos=hp.separate_torsos,
            log_std_init=hp.log_std_init, core_first=hp.recurrent_core_first,
            normalize_obs=hp.normalize_obs, name="actor_critic",
        )  # fmt: skip
        self.model.step(tf.zeros([1, *spec.obs_shape], spec.obs_dtype), self.model.initial_state(1))
        if hp.torch_init:
            torch_init(self.model)
        self._build_reward_scaler()
        if "normalize_obs_at" in hp and hp.normalize_obs_at != "update":
            raise UserError("normalize_obs_at: recurrent PPO normalizes at update time; use update")
        self._build_recurrent_state(self.model.state_size)
        self._build_estimator()

        num_steps, num_envs = self.steps_per_iteration, spec.num_envs
        # The hparams' env count: `--training False` builds the agent for the test env.
        train_steps = max(1, hp.train_every // hp.num_envs)
        length = hp.sequence_length or train_steps
        if length < 1 or train_steps % length:
            raise UserError(
                f"sequence_length={hp.sequence_length} must divide the {train_steps} steps each "
                f"env collects per rollout (train_every // num_envs); use a divisor of "
                f"{train_steps}, or None for whole chunks"
            )
        length = self.sequence_length = length if num_steps % length == 0 else num_steps
        self.num_sequences = num_steps // length * num_envs
        self.num_samples = num_steps * num_envs
        per_minibatch = min(self.num_sequences, max(1, round(hp.batch_size / length)))
        self.num_minibatches = self.num_sequences // per_minibatch
        self.batch_spec = self._build_rollout(num_steps, with_value=True)
        self.rollout_states = RolloutStates(num_steps, num_envs, self.state_size)
        state_spec = tf.TensorSpec([num_steps, num_envs, self.state_size], tf.float32)
        self.batch_spec["state_in"] = state_spec

    # ------------------------------------------------------------------------ acting
    def _act_with_info(self, obs: tf.Tensor) -> LossAndAux:
        self.model.update_obs_statistics(obs)
        state_in = self.recurrent_state.read_value()
        params, value, state_out = self.model.step(obs, state_in)
        action = self._choose(params, explore=True)
        self.recurrent_state.assign(state_out)
        log_prob = action_log_prob(self.model, params, action)
        return action, {"state_in": state_in, "log_prob": log_prob, "value": value}

    def _act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        params, _, state_out = self.model.step(obs, self.recurrent_state.read_value())
        self.recurrent_state.assign(state_out)
        return self._choose(params, explore)

    def _greedy_step(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        params, _, state = self.model.step(obs, state)
        return self._choose(params, explore=False), state

    def _sampled_policy_step(
        self, obs: tf.Tensor, state: tf.Tensor, generator: StatelessGenerator
    ) -> tuple[tf.Tensor, tf.Tensor]:
        params, _, state = self.model.step(obs, state)
        return sample_action(self.model, params, generator), state

    def _observe(self, transition: Batch) -> None:
        self.rollout_states.array[len(self.rollout)] = transition["state_in"]
        super()._observe(transition)

    def _end_all_episodes(self) -> None:
        super()._end_all_episodes()
        self._reset_recurrent_state()

    def _numpy_state_parts(self) -> dict[str, object]:
        return {**super()._numpy_state_parts(), "rollout_states": self.rollout_states}

    # ---------------------------------------------------------------------- learning
    def _update(self) -> Metrics:
        out = self.train_on_batch({**self.rollout.data(), "state_in": self.rollout_states.array})
        self.rollout.reset()
        return {f"train/{name}": float(value) for name, value in out.items()}

    def _replay_rollout(self, batch: TensorBatch) -> dict[str, tf.Tensor]:
        """Step 1 of the module docstring: log-probs, values and advantages [T, N]."""
        hp, spec = self.hparams, self.spec
        num_steps, num_envs = self.steps_per_iteration, spec.num_envs
        done = tf.logical_or(batch["terminated"], batch["truncated"])
        # Zeroed before step t when step t-1 ended an episode (step 0's stored state is right).
        episode_start = tf.concat([tf.zeros([1, num_envs], tf.bool), done[:-1]], axis=0)
        params, value, states = self.model.unroll(batch["obs"], batch["state_in"][0], episode_start)
        n = num_steps * num_envs
        flat_params = tf.reshape(params, [n, -1])
        action = tf.reshape(batch["action"], [n, *spec.action_shape])
        log_prob = self.model.distribution(flat_params).log_prob(self.model.flatten_action(action))
        # V(final_obs) of truncated steps and V(last_next_obs): one core step from the state.
        final_obs = tf.reshape(batch["final_obs"], [n, *spec.obs_shape])
        _, final_values, _ = self.model.step(final_obs, tf.reshape(states, [n, -1]))
        _, bootstrap, _ = self.model.step(batch["last_next_obs"], states[-1])
        final_values = tf.reshape(final_values, [num_steps, num_envs])
        rewards = fold_truncation(batch["reward"], batch["truncated"], final_values, hp.gamma)
        discounts = episode_discounts(batch["terminated"], batch["truncated"], hp.gamma)
        advantages, returns = self.estimate_advantages(rewards, value, discounts, bootstrap)
        return {
            "log_prob": tf.reshape(log_prob, [num_steps, num_envs]),
            "value": value,
            "advantage": advantages,
            "return": returns,
            "episode_start": episode_start,
        }

    def to_sequences(self, x: tf.Tensor) -> tf.Tensor:
        """[T, N, ...] -> [L, (T / L) * N, ...]: sequence c * N + e is env e's c-th piece."""
        length = self.sequence_length
        chunks = self.steps_per_iteration // length
        rest = list(x.shape[2:])
        x = tf.reshape(x, [chunks, length, self.spec.num_envs, *rest])
        x = tf.transpose(x, [1, 0, 2, *range(3, 3 + len(rest))])
        return tf.reshape(x, [length, self.num_sequences, *rest])

    def training_sequences(self, batch: TensorBatch) -> tuple[TensorBatch, TensorBatch]:
        """(`SEQUENCE_FIELDS` [L, sequences, ...] + "initial_state", `_replay_rollout`'s output)."""
        replayed = self._replay_rollout(batch)
        columns = {
            "obs": batch["obs"],
            "action": batch["action"],
            "old_log_prob": replayed["log_prob"],
            "old_value": replayed["value"],
            "advantage": replayed["advantage"],
            "return": replayed["return"],
            "mask": self.sample_mask(batch),
            "episode_start": replayed["episode_start"],
        }
        sequences = {key: self.to_sequences(columns[key]) for key in SEQUENCE_FIELDS}
        # Each sequence starts from the acting-time state of its first step.
        chunk_starts = batch["state_in"][:: self.sequence_length]  # [T / L, N, S]
        sequences["initial_state"] = tf.reshape(chunk_starts, [self.num_sequences, self.state_size])
        return sequences, replayed

    def _train(self, batch: TensorBatch) -> dict[str, tf.Tensor]:
        sequences, replayed = self.training_sequences(batch)
        mask = self.sample_mask(batch)
        metrics = self._update_epochs(sequences, self.num_sequences)
        metrics["explained_variance"] = explained_variance(replayed["return"], replayed["value"])
        metrics["advantage_mean"] = masked_mean(replayed["advantage"], mask)
        return metrics

    def _minibatch_axis(self, key: str) -> int:
        # Sequences are the items: [L, sequences, ...] columns, [sequences, S] states.
        return 0 if key == "initial_state" else 1

    def _learner_batch_size(self) -> int:
        return self.num_sequences // self.num_minibatches

    def _step_loss_and_inputs(
        self, minibatch: TensorBatch
    ) -> tuple[Callable[[TensorBatch], LossAndAux], TensorBatch]:
        return self._sequence_major_loss, sequence_major(minibatch)

    def _sequence_major_loss(self, minibatch: TensorBatch) -> LossAndAux:
        """`minibatch_loss` of a `sequence_major` minibatch (the gradient step's layout)."""
        return self.minibatch_loss(sequence_major(minibatch))

    def minibatch_loss(self, minibatch: TensorBatch) -> LossAndAux:
        """PPO's loss on sequences: unroll from the stored states, then the per-step loss."""
        params, value, _ = self.model.unroll(
            minibatch["obs"], minibatch["initial_state"], minibatch["episode_start"]
        )
        n = tf.size(minibatch["old_log_prob"])
        action = tf.reshape(minibatch["action"], [n, *self.spec.action_shape])
        distribution = self.model.distribution(tf.reshape(params, [n, -1]))
        log_prob = distribution.log_prob(self.model.flatten_action(action))
        flat = {
            key: tf.reshape(minibatch[key], [n])
            for key in ("old_log_prob", "old_value", "advantage", "return", "mask")
        }
        outputs = PolicyOutputs(log_prob, distribution.entropy(), tf.reshape(value, [n]))
        return self.loss(flat, outputs)
